package corpus_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
)

// hubDataset writes a dataset in the hub's Parquet layout: the corpus in two
// shards (row groups of 2 rows), queries in one, test qrels in one.
func hubDataset(t testing.TB, corpusRows [2][]row) string {
	t.Helper()
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "corpus", "corpus-00000-of-00002.parquet"), beir, 2, corpusRows[0])
	writeParquet(t, filepath.Join(dir, "corpus", "corpus-00001-of-00002.parquet"), beir, 2, corpusRows[1])
	writeParquet(t, filepath.Join(dir, "queries", "queries-00000-of-00001.parquet"), table{names: [3]string{"_id", "", "text"}}, 10,
		[]row{{id: s("q1"), text: s("alpha?")}})
	writeQrelsParquet(t, filepath.Join(dir, "qrels", "test-00000-of-00001.parquet"), []corpus.Qrel{{QueryID: "q1", DocID: "d1", Score: 1}}, false)
	return dir
}

func TestHubLayout(t *testing.T) {
	more := []corpus.Doc{{ID: "d4", Text: "four"}, {ID: "d5", Text: "five"}}
	dir := hubDataset(t, [2][]row{rows(threeDocs...), rows(more...)})
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Corpus != filepath.Join(dir, "corpus") || ds.Queries != filepath.Join(dir, "queries") || len(ds.Qrels["test"]) != 1 {
		t.Fatalf("dataset %+v", ds)
	}
	mem, opts := checked(t)
	defer mem.AssertSize(t, 0)
	docs, _, err := readAll(t, ds.Corpus, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]corpus.Doc{}, threeDocs...), more...); !reflect.DeepEqual(docs, want) {
		t.Errorf("docs %+v, want %+v", docs, want)
	}
	// Units are row groups across files: d1 d2 | d3 | d4 d5.
	n, err := corpus.CountUnits(ds.Corpus, opts)
	if err != nil || n != 3 {
		t.Errorf("CountUnits = %d, %v; want 3", n, err)
	}
	opts.Shard = corpus.Shard{I: 1, N: 2}
	docs, _, err = readAll(t, ds.Corpus, opts)
	if err != nil || len(docs) != 1 || docs[0].ID != "d3" {
		t.Errorf("shard 1 of 2: %+v, %v; want d3", docs, err)
	}
	qs, err := ds.ReadQueries(corpus.Options{})
	if err != nil || !reflect.DeepEqual(qs, []corpus.Query{{ID: "q1", Text: "alpha?"}}) {
		t.Errorf("queries %v, %v", qs, err)
	}
	qr, err := ds.ReadQrels("test")
	if err != nil || !reflect.DeepEqual(qr, []corpus.Qrel{{QueryID: "q1", DocID: "d1", Score: 1}}) {
		t.Errorf("qrels %v, %v", qr, err)
	}
}

func TestHubLayoutDuplicateAcrossFiles(t *testing.T) {
	dir := hubDataset(t, [2][]row{rows(threeDocs...), rows(corpus.Doc{ID: "d1", Text: "again"})})
	mem, opts := checked(t)
	defer mem.AssertSize(t, 0)
	_, _, err := readAll(t, filepath.Join(dir, "corpus"), opts)
	want := `file corpus-00001-of-00002.parquet row group 0 row 0 (row 0) (id "d1"): id already used at file corpus-00000-of-00002.parquet row group 0 row 0 (row 0)`
	if !errors.Is(err, corpus.ErrDuplicateID) || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to contain %s", err, want)
	}
}

func TestTextDirectoryIsNotParquet(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), []byte("text"))
	writeParquet(t, filepath.Join(dir, "sub", "x.parquet"), beir, 2, rows(threeDocs...)) // not at the top level
	docs, _, err := readAll(t, dir, corpus.Options{})
	if err != nil || len(docs) != 1 || docs[0].ID != "a.txt" {
		t.Errorf("docs %+v, %v", docs, err)
	}
}
