package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTuneRefusesNothingToLearn checks that tune stops, naming what is
// wrong, on an index of another corpus and on qrels that judge no document
// of the index, and writes no model either way.
func TestTuneRefusesNothingToLearn(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data, evalOut := filepath.Join(dir, "tiny"), filepath.Join(dir, "eval")
	writeTinyDataset(t, data)
	code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32",
		"--out", evalOut, "--k", "20", "--window-k", "20", "--quiet")
	if code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	index := filepath.Join(evalOut, "index")

	// The same corpus, qrels naming documents the corpus lacks.
	foreign := filepath.Join(dir, "foreign")
	writeTinyDataset(t, foreign)
	var qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range 10 {
		qrels.WriteString("q" + string(rune('0'+q)) + "\tother-" + string(rune('0'+q)) + "\t1\n")
	}
	if err := os.WriteFile(filepath.Join(foreign, "qrels", "test.tsv"), []byte(qrels.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another corpus: one document's text changed.
	other := filepath.Join(dir, "other")
	writeTinyDataset(t, other)
	raw, _ := os.ReadFile(filepath.Join(other, "corpus.jsonl"))
	os.WriteFile(filepath.Join(other, "corpus.jsonl"), []byte(strings.Replace(string(raw), "alpha", "omega", 1)), 0o644)

	for _, tc := range []struct {
		name, dataset, want string
	}{
		{"qrels of no document of the index", foreign, `none of the 10 documents ` + foreign + ` split test judges relevant (such as "other-0") is in index ` + index + ` (30 documents)`},
		{"index of another corpus", other, "tune: --index and --dataset disagree: index " + index + " was built from " + filepath.Join(data, "corpus.jsonl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "fusion-"+filepath.Base(tc.dataset)+".json")
			code, _, stderr := runCLI(t, "", "tune", "--dataset", tc.dataset, "--split", "test", "--index", index,
				"--out", out, "--quiet")
			if code != exitFailure || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q: want exit 1 with %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}
