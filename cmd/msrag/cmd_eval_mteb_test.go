package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalMTEBFlags checks that --mteb-task (a name of one's own, forced)
// and --mteb-revision name the MTEB result files.
func TestEvalMTEBFlags(t *testing.T) {
	hashTokenizer(t)
	data, out := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	code, _, stderr := runCLI(t, "", "eval", "--quiet", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16",
		"--configs", "rrf", "--out", out, "--k", "20", "--window-k", "20", "--mteb-task", "TinyRetrieval", "--force-mteb-task", "--mteb-revision", "r1")
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

// TestEvalRuleFlags checks that a dataset named arguana is scored by its
// MTEB task's rule, and that --ignore-identical-ids=false and
// --skip-first-result force the rules, as results.json records.
func TestEvalRuleFlags(t *testing.T) {
	hashTokenizer(t)
	data := filepath.Join(t.TempDir(), "arguana")
	writeTinyDataset(t, data)
	index := filepath.Join(t.TempDir(), "index")
	for _, tc := range []struct {
		flags        []string
		ident, skip  bool
		sourcePrefix string
	}{
		{nil, true, false, "mteb "},
		{[]string{"--ignore-identical-ids=false"}, false, false, "given, over mteb "},
		{[]string{"--skip-first-result"}, true, true, "given, over mteb "},
	} {
		out := t.TempDir()
		args := append([]string{"eval", "--quiet", "--dataset", data, "--index", index, "--model", "hash-test-embedder", "--windows", "16",
			"--configs", "rrf", "--out", out, "--k", "20", "--window-k", "20"}, tc.flags...)
		code, _, stderr := runCLI(t, "", args...)
		if code != exitOK {
			t.Fatalf("%v: code %d\n%s", tc.flags, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Scoring struct {
				Ident  bool   `json:"ignore_identical_ids"`
				Skip   bool   `json:"skip_first_result"`
				Source string `json:"source"`
			} `json:"scoring"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatal(err)
		}
		if s := e.Scoring; s.Ident != tc.ident || s.Skip != tc.skip || !strings.HasPrefix(s.Source, tc.sourcePrefix) || !strings.HasSuffix(s.Source, " task ArguAna") {
			t.Errorf("%v: scoring %+v; want ignore_identical_ids %v, skip_first_result %v, source %q...", tc.flags, s, tc.ident, tc.skip, tc.sourcePrefix)
		}
	}
}
