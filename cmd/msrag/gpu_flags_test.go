//go:build !gpu

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFAISSGPUFlagsBeforeWork: on a build without FAISS GPU support, search
// and eval with --device cuda or --gpus fail before any work (no index
// built, no model opened), naming the missing support; a --window-k FAISS on
// GPUs cannot return is a usage error; --device auto searches on the CPU and
// says so.
func TestFAISSGPUFlagsBeforeWork(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	code, _, errOut := runCLI(t, "", "index", "--corpus", filepath.Join(data, "corpus.jsonl"), "--out", idx,
		"--model", "hash-test-embedder", "--windows", "16", "--quiet", "--no-lexical")
	if code != exitOK {
		t.Fatalf("index: code %d: %s", code, errOut)
	}
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee\n"), 0o644)
	search := []string{"search", "--index", idx, "--queries", queries, "--k", "3"}
	evalOut := filepath.Join(dir, "ev")
	eval := []string{"eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16", "--out", evalOut,
		"--k", "10", "--window-k", "10", "--no-lexical"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"search cuda", append(search, "--device", "cuda"), exitFailure, "--device cuda: FAISS on GPUs [0]: built without GPU support"},
		{"search gpus", append(search, "--gpus", "0,1"), exitFailure, "FAISS on GPUs [0 1]: built without GPU support"},
		{"search window-k", append(search, "--device", "cuda", "--window-k", "2049"), exitUsage, "--window-k 2049 is more than FAISS on GPUs returns (2048)"},
		{"eval cuda", append(eval, "--device", "cuda"), exitFailure, "--device cuda: FAISS on GPUs [0]: built without GPU support"},
		{"eval device-id", append(eval, "--device", "cuda", "--device-id", "3"), exitFailure, "FAISS on GPUs [3]"},
		{"eval window-k", append(eval, "--gpus", "0", "--window-k", "4096"), exitUsage, "--window-k 4096 is more than FAISS on GPUs returns (2048)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("code %d (want %d), stderr %q (want %q)", code, tc.code, errOut, tc.msg)
			}
			if _, err := os.Stat(evalOut); !os.IsNotExist(err) {
				t.Fatalf("%s was written (%v): the error came after the work started", evalOut, err)
			}
		})
	}
	t.Run("auto", func(t *testing.T) {
		for _, args := range [][]string{append(search, "--device", "auto"), append(eval, "--device", "auto")} {
			code, _, errOut := runCLI(t, "", args...)
			if code != exitOK || !strings.Contains(errOut, "FAISS searches on the CPU") {
				t.Fatalf("%s --device auto: code %d, stderr %q", args[0], code, errOut)
			}
		}
	})
}
