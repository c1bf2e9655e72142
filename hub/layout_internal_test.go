package hub

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestPlanLayout checks which files each layout takes, and where they go.
func TestPlanLayout(t *testing.T) {
	listed := func(paths ...string) []File {
		var fs []File
		for _, p := range paths {
			fs = append(fs, File{Path: p, Size: 1})
		}
		return fs
	}
	for _, tc := range []struct {
		name  string
		files []File
		want  []string // "dst <- src", "(tsv)" for a conversion
	}{
		{
			name: "BEIR Parquet upload, qrels under data/",
			files: listed("README.md", "corpus/corpus-00000-of-00001.parquet", "queries/queries-00000-of-00001.parquet",
				"data/test-00000-of-00001.parquet", "data/dev-00000-of-00001.parquet"),
			want: []string{"corpus/corpus-00000-of-00001.parquet <- corpus/corpus-00000-of-00001.parquet",
				"queries/queries-00000-of-00001.parquet <- queries/queries-00000-of-00001.parquet",
				"qrels/dev-00000-of-00001.parquet <- data/dev-00000-of-00001.parquet",
				"qrels/test-00000-of-00001.parquet <- data/test-00000-of-00001.parquet"},
		},
		{
			name: "MTEB v2 upload: every config split test, qrels/ beats default/ and data/",
			files: listed("corpus/test-00000-of-00002.parquet", "corpus/test-00001-of-00002.parquet", "queries/test-00000-of-00001.parquet",
				"qrels/test-00000-of-00001.parquet", "default/test-00000-of-00001.parquet", "data/test-00000-of-00001.parquet",
				"default/train-00000-of-00001.parquet", "data/train-00000-of-00001.parquet", "top_ranked/test-00000-of-00001.parquet"),
			want: []string{"corpus/test-00000-of-00002.parquet <- corpus/test-00000-of-00002.parquet",
				"corpus/test-00001-of-00002.parquet <- corpus/test-00001-of-00002.parquet",
				"queries/test-00000-of-00001.parquet <- queries/test-00000-of-00001.parquet",
				"qrels/test-00000-of-00001.parquet <- qrels/test-00000-of-00001.parquet",
				"qrels/train-00000-of-00001.parquet <- default/train-00000-of-00001.parquet"},
		},
		{
			name: "older layout: TSV beats JSONL, JSONL alone is converted, Parquet beats JSONL",
			files: listed("corpus.jsonl", "corpus/corpus-00000-of-00001.parquet", "queries.jsonl.gz", "queries.jsonl",
				"qrels/test.tsv", "qrels/test.jsonl", "qrels/dev.jsonl", "qrels/.hidden.tsv", "qrels/notes.txt", "../qrels/x.tsv"),
			want: []string{"corpus/corpus-00000-of-00001.parquet <- corpus/corpus-00000-of-00001.parquet",
				"queries.jsonl.gz <- queries.jsonl.gz",
				"qrels/dev.tsv <- qrels/dev.jsonl (tsv)",
				"qrels/test.tsv <- qrels/test.tsv"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := planLayout(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range steps {
				line := s.dst + " <- " + s.src.Path
				if s.convert {
					line += " (tsv)"
				}
				got = append(got, line)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestPlanLayoutMissing checks the error for each missing part.
func TestPlanLayoutMissing(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		say   string
	}{
		{[]string{"queries.jsonl", "qrels/test.tsv"}, "no corpus"},
		{[]string{"corpus.jsonl", "queries/x.txt", "qrels/test.tsv"}, "no queries"},
		{[]string{"corpus.jsonl", "queries.jsonl", "qrels.tsv", "other/test-00000-of-00001.parquet"}, "no qrels"},
		{nil, "among no files"},
	} {
		var files []File
		for _, p := range tc.paths {
			files = append(files, File{Path: p})
		}
		_, err := planLayout(files)
		if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("%v: %v, want ErrLayout saying %q", tc.paths, err, tc.say)
		}
	}
}

// TestConvertQrels converts JSONL judgements to TSV and refuses bad lines.
func TestConvertQrels(t *testing.T) {
	in := `{"query-id": "PLAIN-2", "corpus-id": "MED-10", "score": "2"}` + "\n\n" +
		`{"query-id": 7, "corpus-id": 12, "score": 1.0, "extra": [1]}` + "\n" +
		`{"score": 0, "corpus-id": "d", "query-id": "q"}`
	var out strings.Builder
	if err := convertQrels(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "query-id\tcorpus-id\tscore\nPLAIN-2\tMED-10\t2\n7\t12\t1\nq\td\t0\n"
	if out.String() != want {
		t.Errorf("converted to %q, want %q", out.String(), want)
	}
	for _, bad := range []struct{ line, say string }{
		{`{"query-id": "q", "corpus-id": "d", "score": 1.5}`, "not an integer"},
		{`{"query-id": "q", "corpus-id": "d", "score": "high"}`, "not an integer"},
		{`{"query-id": "q", "score": 1}`, "corpus-id"},
		{`{"query-id": "a b", "corpus-id": "d", "score": 1}`, "whitespace"},
		{`{"query-id": null, "corpus-id": "d", "score": 1}`, "query-id"},
		{`["q", "d", 1]`, "not a JSON object"},
	} {
		err := convertQrels(strings.NewReader("{\"query-id\":\"q0\",\"corpus-id\":\"d0\",\"score\":1}\n"+bad.line+"\n"), &strings.Builder{})
		if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), bad.say) {
			t.Errorf("%s: %v, want ErrLayout at line 2 saying %q", bad.line, err, bad.say)
		}
	}
}
