package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFusionTransfer: --fusion transfer searches with the built-in fusion
// model on an index of its channels, eval --fusion-model transfer adds its
// configuration, and an index without the lexical channels it fuses is
// refused before any query is searched, naming what it lacks.
func TestFusionTransfer(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	common := []string{"--dataset", data, "--model", "hash-test-embedder", "--windows", "64,128,254", "--k", "20", "--window-k", "20", "--quiet"}
	evalOut := filepath.Join(dir, "eval")
	code, _, stderr := runCLI(t, "", append([]string{"eval", "--out", evalOut, "--configs", "rrf", "--fusion-model", "transfer"}, common...)...)
	if code != exitOK {
		t.Fatalf("eval --fusion-model transfer: exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(evalOut, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"transfer"`) {
		t.Errorf("results.json has no configuration transfer: %.300s", raw)
	}

	// A file named like the built-in is read as a file when named as a path.
	local := filepath.Join(dir, "transfer")
	os.WriteFile(local, []byte("{}"), 0o644)
	code, _, stderr = runCLI(t, "", append([]string{"eval", "--out", filepath.Join(dir, "eval2"), "--configs", "rrf", "--fusion-model", local}, common...)...)
	if code != exitUsage || !strings.Contains(stderr, local) {
		t.Errorf("--fusion-model %s (a file, not a fusion model): exit %d, %q; want a usage error naming the file", local, code, stderr)
	}

	index := filepath.Join(evalOut, "index")
	code, stdout, stderr := runCLI(t, "", "search", "--index", index, "--queries", data, "--fusion", "transfer", "--k", "3")
	if n := strings.Count(stdout, "\n"); code != exitOK || n == 0 || n%3 != 0 {
		t.Fatalf("search --fusion transfer: exit %d, %d lines: %s", code, strings.Count(stdout, "\n"), stderr)
	}
	// The name in any case, and --fusion-model transfer as eval takes it:
	// the same built-in fusion, the same run.
	for _, flags := range [][]string{{"--fusion", "TRANSFER"}, {"--fusion-model", "transfer"}, {"--fusion-model", "Transfer"}} {
		code, got, stderr := runCLI(t, "", append([]string{"search", "--index", index, "--queries", data, "--k", "3"}, flags...)...)
		if code != exitOK || got != stdout {
			t.Errorf("search %v: exit %d, %s: want the run of --fusion transfer", flags, code, stderr)
		}
	}

	dense := filepath.Join(dir, "dense")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", data, "--out", dense, "--model", "hash-test-embedder",
		"--windows", "64,128,254", "--full", "--no-lexical", "--quiet"); code != exitOK {
		t.Fatalf("index --no-lexical: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "", "search", "--index", dense, "--queries", data, "--fusion", "transfer")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "built-in fusion transfer serves indices with the channels") || !strings.Contains(stderr, "bm25-doc") {
		t.Errorf("search --fusion transfer on a dense index: exit %d, stderr %q; want a usage error naming the channels", code, stderr)
	}
}
