package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/onnx"
)

// TestFP16CLI builds an index with all-MiniLM-L6-v2 in fp32 and, where its
// fp16 file has been made, one in fp16, and checks that each is searched
// only in its own precision: the other is refused with a message that says
// which precision the index was embedded in and what to give. --fp16 with a
// model that is not an ONNX model run in this process is a usage error.
func TestFP16CLI(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	queries := filepath.Join(dir, "queries.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee and heart disease\n"), 0o644)
	index := func(out string, extra ...string) {
		t.Helper()
		args := append([]string{"index", "--corpus", corpusPath, "--out", out, "--model", "all-minilm-l6-v2", "--windows", "8", "--quiet", "--no-lexical"}, extra...)
		if code, _, errOut := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("%v: code %d: %s", args, code, errOut)
		}
	}
	search := func(idx string, extra ...string) (int, string) {
		args := append([]string{"search", "--index", idx, "--queries", queries, "--k", "1"}, extra...)
		code, _, errOut := runCLI(t, "", args...)
		return code, errOut
	}

	full := filepath.Join(dir, "fp32")
	index(full)
	if code, errOut := search(full, "--fp16"); code == exitOK || !strings.Contains(errOut, "in fp32") || !strings.Contains(errOut, "leave out --fp16") {
		t.Errorf("fp32 index searched with --fp16: code %d: %s", code, errOut)
	}

	t.Run("not an onnx model", func(t *testing.T) {
		code, _, errOut := runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "h"), "--model", "hash-test-embedder", "--fp16")
		if code != exitUsage || !strings.Contains(errOut, "--fp16 is for an ONNX model") {
			t.Errorf("index: code %d: %s", code, errOut)
		}
		hash := filepath.Join(dir, "hash")
		if code, _, errOut := runCLI(t, "", "index", "--corpus", corpusPath, "--out", hash, "--model", "hash-test-embedder", "--windows", "8", "--quiet", "--no-lexical"); code != exitOK {
			t.Fatalf("index: code %d: %s", code, errOut)
		}
		if code, errOut := search(hash, "--fp16"); code != exitUsage || !strings.Contains(errOut, "--fp16 is for an index of an ONNX model") {
			t.Errorf("search: code %d: %s", code, errOut)
		}
	})

	t.Run("fp16 index", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(onnx.ModelsDir(), "all-minilm-l6-v2", onnx.FP16ModelFile)); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("all-minilm-l6-v2 has no fp16 file under CI: %v", err)
			}
			t.Skipf("all-minilm-l6-v2 has no fp16 file (msrag model fetch all-minilm-l6-v2 --fp16): %v", err)
		}
		half := filepath.Join(dir, "fp16")
		index(half, "--fp16")
		m, err := msrag.ReadManifest(half)
		if err != nil || m.Model.Precision != "fp16" {
			t.Fatalf("manifest precision %q (%v), want fp16", m.Model.Precision, err)
		}
		if code, errOut := search(half); code == exitOK || !strings.Contains(errOut, "in fp16") || !strings.Contains(errOut, "give --fp16") {
			t.Errorf("fp16 index searched without --fp16: code %d: %s", code, errOut)
		}
		if code, errOut := search(half, "--fp16"); code != exitOK {
			t.Errorf("fp16 index searched with --fp16: code %d: %s", code, errOut)
		}
	})
}
