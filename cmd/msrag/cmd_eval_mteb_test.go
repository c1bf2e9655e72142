package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalMTEBFlags checks that --mteb-task and --mteb-revision name the MTEB
// result files.
func TestEvalMTEBFlags(t *testing.T) {
	hashTokenizer(t)
	data, out := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	code, _, stderr := runCLI(t, "", "eval", "--quiet", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16",
		"--configs", "rrf", "--out", out, "--k", "20", "--window-k", "20", "--mteb-task", "TinyRetrieval", "--mteb-revision", "r1")
	if code != exitOK {
		t.Fatalf("eval: code %d\n%s", code, stderr)
	}
	path := filepath.Join(out, "mteb", "results", "msrag__hash-test-embedder-rrf", "no_revision_available", "TinyRetrieval.json")
	data2, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var tr struct {
		TaskName        string `json:"task_name"`
		DatasetRevision string `json:"dataset_revision"`
	}
	if err := json.Unmarshal(data2, &tr); err != nil || tr.TaskName != "TinyRetrieval" || tr.DatasetRevision != "r1" {
		t.Errorf("%s: %+v, %v", path, tr, err)
	}
	if !strings.Contains(stderr, "wrote 1 MTEB result files") {
		t.Errorf("stderr does not say where the MTEB files went:\n%s", stderr)
	}
}
