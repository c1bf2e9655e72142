package corpus_test

import (
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/testfiles"
)

// TestSciFact reads the real SciFact set and checks the counts published
// with it (5,183 documents, 1,109 queries, 339 test pairs over 300 queries).
func TestSciFact(t *testing.T) {
	dir := testfiles.Dataset(t, "scifact")
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Corpus != filepath.Join(dir, "corpus.jsonl.gz") {
		t.Errorf("corpus file %s", ds.Corpus)
	}
	docs, st, err := readAll(t, ds.Corpus, corpus.Options{BatchSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 5183 || st.Empty != 0 || st.InvalidUTF8 != 0 {
		t.Errorf("%d documents (stats %+v), want 5183", len(docs), st)
	}
	titled := 0
	for _, d := range docs {
		if d.Title != "" {
			titled++
		}
	}
	if titled == 0 {
		t.Error("no document has a title")
	}
	qs, err := ds.ReadQueries(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1109 {
		t.Errorf("%d queries, want 1109", len(qs))
	}
	qrels, err := ds.ReadQrels("test")
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string]bool{}
	for _, q := range qrels {
		queries[q.QueryID] = true
	}
	if len(qrels) != 339 || len(queries) != 300 {
		t.Errorf("test qrels: %d pairs over %d queries, want 339 over 300", len(qrels), len(queries))
	}
	if got := ds.Splits(); len(got) != 2 {
		t.Errorf("splits %v, want test and train", got)
	}
}
