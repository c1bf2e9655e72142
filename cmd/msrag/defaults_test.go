package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fusion"
)

// TestGoZeroFusionIsTheCLIDefault: msrag search without --fusion and the Go
// search with the zero SearchOptions.Fusion rank alike, by the index's
// default (the hybrid over dense and lexical channels); fusion.Parse("rrf")
// in Go is --fusion rrf.
func TestGoZeroFusionIsTheCLIDefault(t *testing.T) {
	hashTokenizer(t)
	data, dir := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", data, "--out", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--quiet"); code != exitOK {
		t.Fatalf("index: code %d\n%s", code, stderr)
	}
	queries := []string{"alpha beta gamma", "kappa lambda", "omega psi chi phi"}
	qfile := filepath.Join(dir, "q.tsv")
	var tsv strings.Builder
	for i, q := range queries {
		fmt.Fprintf(&tsv, "q%d\t%s\n", i, q)
	}
	os.WriteFile(qfile, []byte(tsv.String()), 0o644)
	ix, err := msrag.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if len(ix.Layout().Kinds()) < 2 {
		t.Fatalf("the index has one kind of channel (%s): the default would be rrf either way", ix.Layout())
	}
	rrf, err := fusion.Parse("rrf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags  []string
		fusion fusion.Fusion
	}{{nil, fusion.Fusion{}}, {[]string{"--fusion", "rrf"}, rrf}} {
		code, stdout, stderr := runCLI(t, "", append([]string{"search", "--index", idx, "--queries", qfile, "--k", "5"}, tc.flags...)...)
		if code != exitOK {
			t.Fatalf("search %v: code %d\n%s", tc.flags, code, stderr)
		}
		hits, err := ix.Search(context.Background(), queries, msrag.SearchOptions{K: 5, Fusion: tc.fusion})
		if err != nil {
			t.Fatal(err)
		}
		var goRun strings.Builder
		for i, row := range hits {
			for _, h := range row {
				fmt.Fprintf(&goRun, "q%d %s %d\n", i, h.DocID, h.Rank)
			}
		}
		var cliRun strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
			f := strings.Fields(line)
			fmt.Fprintf(&cliRun, "%s %s %s\n", f[0], f[2], f[3])
		}
		if goRun.String() != cliRun.String() {
			t.Errorf("search %v: Go (fusion %q) ranks\n%s\nthe command line\n%s", tc.flags, tc.fusion, goRun.String(), cliRun.String())
		}
	}
}

// TestOneDefaultEverywhere: msrag index refuses an --out that holds an
// index unless --rebuild is given, and says it replaced it; eval --index
// takes the model and windows the index records; without --windows the
// default sizes are lowered to what the model takes, and windows given
// that do not fit are a usage error naming a set that does; search
// --split searches only the split's judged queries.
func TestOneDefaultEverywhere(t *testing.T) {
	hashTokenizer(t)
	data, dir := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	model := testModel(t)
	code, _, stderr := runCLI(t, "", "index", "--corpus", data, "--out", filepath.Join(dir, "minilm"), "--model", model, "--channel", "dense")
	if code != exitOK || !strings.Contains(stderr, "windows 100,200,254, which fit") || !strings.Contains(stderr, "windows w100,w200,w254") {
		t.Fatalf("index without --windows: code %d, want the default windows fitted to the model\n%s", code, stderr)
	}
	if code, _, stderr = runCLI(t, "", "index", "--corpus", data, "--out", filepath.Join(dir, "big"), "--model", model, "--windows", "100,500", "--quiet"); code != exitUsage || !strings.Contains(stderr, "windows that fit: 100,254") {
		t.Errorf("--windows 100,500 for a model of 256 tokens: code %d, want %d proposing 100,254\n%s", code, exitUsage, stderr)
	}
	idx := filepath.Join(dir, "idx")
	index := []string{"index", "--corpus", data, "--out", idx, "--model", "hash-test-embedder", "--quiet"}
	if code, _, stderr = runCLI(t, "", index...); code != exitOK {
		t.Fatalf("index: code %d\n%s", code, stderr)
	}
	if code, _, stderr = runCLI(t, "", index...); code != exitUsage || !strings.Contains(stderr, "holds an index: give --rebuild") {
		t.Errorf("index over an index: code %d, want %d naming --rebuild\n%s", code, exitUsage, stderr)
	}
	if code, _, stderr = runCLI(t, "", append(index, "--rebuild", "--windows", "16,32")...); code != exitOK || !strings.Contains(stderr, "replaced the index") {
		t.Errorf("index --rebuild: code %d\n%s", code, stderr)
	}

	out := filepath.Join(dir, "eval")
	code, _, stderr = runCLI(t, "", "eval", "--dataset", data, "--index", idx, "--out", out, "--configs", "rrf")
	if code != exitOK || !strings.Contains(stderr, "--model hash-test-embedder --windows 16,32, as the index in") || !strings.Contains(stderr, "reusing index") {
		t.Fatalf("eval --index without --model and --windows: code %d\n%s", code, stderr)
	}
	if e := readEval(t, out); e.Model.Name != "hash-test-embedder" || fmt.Sprint(e.Windows) != "[16 32]" {
		t.Errorf("eval took model %s, windows %v", e.Model.Name, e.Windows)
	}

	code, stdout, stderr := runCLI(t, "", "search", "--index", idx, "--queries", data, "--split", "test")
	qids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		qids[strings.Fields(line)[0]] = true
	}
	if code != exitOK || len(qids) != 10 || qids["q10"] {
		t.Errorf("search --split test: code %d, %d queries (q10 %v), want the 10 judged\n%s", code, len(qids), qids["q10"], stderr)
	}
	if code, _, stderr = runCLI(t, "", "search", "--index", idx, "--queries", filepath.Join(data, "queries.jsonl"), "--split", "test"); code != exitUsage {
		t.Errorf("search --split with a queries file: code %d\n%s", code, stderr)
	}
}
