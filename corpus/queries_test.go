package corpus_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
)

func TestReadQueries(t *testing.T) {
	want := []corpus.Query{{ID: "q1", Text: "what is alpha?"}, {ID: "q2", Text: "gamma rays"}}
	tests := []struct {
		name, file, data string
		want             []corpus.Query
	}{
		{"jsonl", "queries.jsonl", `{"_id":"q1","text":"what is alpha?"}` + "\n" + `{"_id":"q2","text":"gamma rays","metadata":{}}` + "\n", want},
		{"jsonl.gz", "queries.jsonl.gz", `{"_id":"q1","text":"what is alpha?"}` + "\n" + `{"_id":"q2","text":"gamma rays"}`, want},
		{"tsv with header", "queries.tsv", "query-id\ttext\nq1\twhat is alpha?\nq2\tgamma rays\n", want},
		{"tsv without header", "queries.tsv", "q1\twhat is alpha?\r\nq2\tgamma rays\r\n", want},
		{"one per line", "queries.txt", "what is alpha?\ngamma rays\n", []corpus.Query{{ID: "1", Text: "what is alpha?"}, {ID: "2", Text: "gamma rays"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			writeFile(t, path, []byte(tt.data))
			got, err := corpus.ReadQueries(path, corpus.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("parquet", func(t *testing.T) {
		mem, opts := checked(t)
		defer mem.AssertSize(t, 0)
		path := filepath.Join(t.TempDir(), "queries.parquet")
		writeParquet(t, path, table{names: [3]string{"_id", "", "text"}}, 10, []row{{id: s("q1"), text: s("what is alpha?")}, {id: s("q2"), text: s("gamma rays")}})
		got, err := corpus.ReadQueries(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestReadQueriesErrors(t *testing.T) {
	tests := []struct {
		name, file, data, want string
		sentinel               error
	}{
		{"empty line", "q.txt", "first\n\nthird\n", "q.txt line 2: empty line", corpus.ErrRecord},
		{"blank line tsv", "q.tsv", "a\tx\n  \n", "q.tsv line 2: empty line", corpus.ErrRecord},
		{"no tab", "q.tsv", "a\tx\nb x\n", "q.tsv line 2: no tab between id and text", corpus.ErrRecord},
		{"empty query text", "q.tsv", "a\tx\nb\t\n", `q.tsv line 2 (id "b"): empty text`, corpus.ErrRecord},
		{"empty jsonl text", "q.jsonl", `{"_id":"a","text":""}` + "\n", `q.jsonl line 1 (id "a"): empty text`, corpus.ErrRecord},
		{"empty jsonl line", "q.jsonl", `{"_id":"a","text":"x"}` + "\n\n", `q.jsonl line 2: empty line`, corpus.ErrRecord},
		{"duplicate id", "q.tsv", "a\tx\na\ty\n", `q.tsv line 2 (id "a"): id already used at line 1`, corpus.ErrDuplicateID},
		{"empty file", "q.txt", "", "q.txt: no queries", corpus.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			writeFile(t, path, []byte(tt.data))
			_, err := corpus.ReadQueries(path, corpus.Options{})
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("err = %v, want %v", err, tt.sentinel)
			}
			// A queries file is called one: "corpus: q.tsv" read as a corpus file.
			if !strings.HasPrefix(err.Error(), "corpus: queries file "+filepath.Dir(path)) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestReadQrels(t *testing.T) {
	want := []corpus.Qrel{{QueryID: "q1", DocID: "d1", Score: 1}, {QueryID: "q1", DocID: "d7", Score: 2}, {QueryID: "q2", DocID: "d1", Score: 0}}
	tests := []struct{ name, data string }{
		{"header", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td7\t2\nq2\td1\t0\n"},
		{"no header", "q1\td1\t1\nq1\td7\t2\nq2\td1\t0"},
		{"trec", "q1 0 d1 1\nq1 0 d7 2\nq2 0 d1 0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "test.tsv")
			writeFile(t, path, []byte(tt.data))
			got, err := corpus.ReadQrels(path, corpus.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
	t.Run("parquet", func(t *testing.T) {
		mem, opts := checked(t)
		defer mem.AssertSize(t, 0)
		path := filepath.Join(t.TempDir(), "test.parquet")
		writeQrelsParquet(t, path, want, false)
		got, err := corpus.ReadQrels(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("parquet with integer ids and float scores", func(t *testing.T) {
		mem, opts := checked(t)
		defer mem.AssertSize(t, 0)
		path := filepath.Join(t.TempDir(), "test.parquet")
		nums := []corpus.Qrel{{QueryID: "1", DocID: "4983", Score: 1}, {QueryID: "2", DocID: "7", Score: 2}}
		writeQrelsParquet(t, path, nums, true)
		got, err := corpus.ReadQrels(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, nums) {
			t.Errorf("got %v, want %v", got, nums)
		}
	})
	t.Run("parquet without score", func(t *testing.T) {
		mem, opts := checked(t)
		defer mem.AssertSize(t, 0)
		path := filepath.Join(t.TempDir(), "test.parquet")
		writeParquet(t, path, table{names: [3]string{"query-id", "", "corpus-id"}}, 10, []row{{id: s("q"), text: s("d")}})
		_, err := corpus.ReadQrels(path, opts)
		if !errors.Is(err, corpus.ErrColumn) || !strings.Contains(err.Error(), path+`: no column "score"`) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestReadQrelsErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
		sentinel         error
	}{
		{"bad score", "q1\td1\t1\nq1\td2\tyes\n", `line 2: score "yes" of query "q1", document "d2" is not an integer`, corpus.ErrRecord},
		{"two fields", "q1\td1\n", "line 1: 2 fields, want query-id corpus-id score", corpus.ErrRecord},
		{"header not first", "q1\td1\t1\nquery-id\tcorpus-id\tscore\n", `line 2: score "score" of query "query-id"`, corpus.ErrRecord},
		{"mixed layouts", "q1\td1\t1\nq1 0 d2 1\n", "line 2: 4 fields, the lines before have 3", corpus.ErrRecord},
		{"invalid utf-8", "q1\td\xff\t1\n", "line 1: invalid UTF-8", corpus.ErrRecord},
		{"repeated pair", "q1\td1\t1\nq1\td1\t1\n", `line 2: query "q1" and document "d1" already judged at line 1`, corpus.ErrDuplicateID},
		{"header only", "query-id\tcorpus-id\tscore\n", "no judgements", corpus.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "test.tsv")
			writeFile(t, path, []byte(tt.data))
			_, err := corpus.ReadQrels(path, corpus.Options{})
			if !errors.Is(err, tt.sentinel) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %v naming %s and %q", err, tt.sentinel, path, tt.want)
			}
		})
	}
}

// TestParseQrels reads judgements from a stream: blank lines are skipped,
// a header may only come first, TREC's four columns are accepted.
func TestParseQrels(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]map[string]int
	}{
		{"beir with header", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td1\t2\n", map[string]map[string]int{"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}},
		{"blank lines", "\nq1\td1\t1\n\n  \nq2\td3\t1", map[string]map[string]int{"q1": {"d1": 1}, "q2": {"d3": 1}}},
		{"trec", "q1 0 d1 1\nq1 0 d2 -1\n", map[string]map[string]int{"q1": {"d1": 1, "d2": -1}}},
		{"empty", "", map[string]map[string]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := corpus.ParseQrels(strings.NewReader(tt.in), "qrels.tsv")
			if err != nil {
				t.Fatal(err)
			}
			if got := corpus.Judgements(rows); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	_, err := corpus.ParseQrels(strings.NewReader("q1 d1 1\nq1 d1 2\n"), "qrels.tsv")
	var re *corpus.RecordError
	if !errors.As(err, &re) || re.File != "qrels.tsv" || re.Where != "line 2" || !errors.Is(err, corpus.ErrDuplicateID) {
		t.Errorf("a pair judged twice: %v", err)
	}
}

func TestReadJudgementsOfSeveralSplits(t *testing.T) {
	dir := t.TempDir()
	writeJSONL(t, filepath.Join(dir, "corpus.jsonl"), rows(threeDocs...))
	writeFile(t, filepath.Join(dir, "queries.jsonl"), []byte(`{"_id":"q1","text":"alpha?"}`+"\n"))
	writeFile(t, filepath.Join(dir, "qrels", "train.tsv"), []byte("q1\td1\t1\nq1\td2\t2\n"))
	writeFile(t, filepath.Join(dir, "qrels", "dev.tsv"), []byte("q2\td3\t1\n"))
	writeFile(t, filepath.Join(dir, "qrels", "test.tsv"), []byte("q2\td1\t1\n"))
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ds.ReadJudgements("train+dev")
	if want := map[string]map[string]int{"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("train+dev: %v, %v; want %v", got, err, want)
	}
	if _, err := ds.ReadJudgements("dev+test"); !errors.Is(err, corpus.ErrDuplicateID) || !strings.Contains(err.Error(), `query "q2" is judged in both split "dev" and split "test"`) {
		t.Errorf("a query in two splits: %v", err)
	}
	if _, err := ds.ReadJudgements("train+"); err == nil {
		t.Error("an empty split name was accepted")
	}
}

func TestDataset(t *testing.T) {
	dir := t.TempDir()
	writeJSONL(t, filepath.Join(dir, "corpus.jsonl.gz"), rows(threeDocs...))
	writeFile(t, filepath.Join(dir, "queries.jsonl"), []byte(`{"_id":"q1","text":"alpha?"}`+"\n"))
	writeFile(t, filepath.Join(dir, "qrels", "test.tsv"), []byte("query-id\tcorpus-id\tscore\nq1\td1\t1\n"))
	writeFile(t, filepath.Join(dir, "qrels", "dev.tsv"), []byte("q1\td3\t1\n"))
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := ds.Splits(); !reflect.DeepEqual(got, []string{"dev", "test"}) {
		t.Errorf("Splits = %v", got)
	}
	qs, err := ds.ReadQueries(corpus.Options{})
	if err != nil || len(qs) != 1 {
		t.Errorf("queries %v, %v", qs, err)
	}
	qr, err := ds.ReadQrels("dev")
	if err != nil || !reflect.DeepEqual(qr, []corpus.Qrel{{QueryID: "q1", DocID: "d3", Score: 1}}) {
		t.Errorf("qrels %v, %v", qr, err)
	}
	if _, err := ds.ReadQrels("train"); err == nil || !strings.Contains(err.Error(), `no split "train" (have dev, test)`) {
		t.Errorf("missing split: %v", err)
	}
	r, err := ds.OpenCorpus(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()

	empty := t.TempDir()
	if _, err := corpus.OpenDataset(empty); err == nil || !strings.Contains(err.Error(), "none of corpus.jsonl.gz") {
		t.Errorf("empty dataset dir: %v", err)
	}
}
