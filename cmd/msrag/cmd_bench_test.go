package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/suite"
)

// writeSuite writes a suite file naming two tiny datasets (written beside
// it) and the given models into dir, and returns its path.
func writeSuite(t *testing.T, dir string, models string) string {
	t.Helper()
	writeTinyDataset(t, filepath.Join(dir, "data", "tiny"))
	writeTinyDataset(t, filepath.Join(dir, "data", "small"))
	file := filepath.Join(dir, "suite.json")
	s := `{"name": "cli", "out": "out", "k": 20, "window_k": 20, "configs": "windows,rrf,oracle",
		"datasets": [{"dir": "data/tiny"}, {"dir": "data/small", "task": "SmallRetrieval", "force_task": true}],
		"models": ` + models + `}`
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestBench(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	file := writeSuite(t, dir, `[{"name": "hash-test-embedder", "window_sets": [[16, 32]]}]`)

	// --check prints the plan and runs nothing.
	code, stdout, stderr := runCLI(t, "", "bench", "--suite", file, "--check")
	if code != exitOK || !strings.Contains(stdout, "2 runs into "+filepath.Join(dir, "out")) ||
		!strings.Contains(stdout, "small-hash-test-embedder-w16-32") || !strings.Contains(stdout, "SmallRetrieval") {
		t.Fatalf("bench --check: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Fatalf("bench --check wrote %s", filepath.Join(dir, "out"))
	}

	// --out moves the output (relative to the working directory, here absolute).
	out := filepath.Join(t.TempDir(), "elsewhere")
	code, stdout, stderr = runCLI(t, "", "bench", "--suite", file, "--quiet", "--out", out)
	if code != exitOK {
		t.Fatalf("bench: code %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "# Suite cli") || !strings.Contains(stdout, "## Oracle headroom") {
		t.Errorf("bench does not print the summary:\n%s", stdout)
	}
	var sum suite.Summary
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err == nil {
		err = json.Unmarshal(data, &sum)
	}
	if err != nil || len(sum.Runs) != 2 || sum.Runs[0].Status != suite.StatusDone || sum.Runs[1].Means["rrf"] == nil {
		t.Fatalf("summary.json: %v\n%s", err, data)
	}
	for _, f := range []string{"summary.md", "recall_at_k.svg", "tiny-hash-test-embedder-w16-32/report.md",
		"mteb/results/msrag__hash-test-embedder-rrf/no_revision_available/SmallRetrieval.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("bench output: %v", err)
		}
	}
	if !strings.Contains(stderr, "bench: wrote "+filepath.Join(out, "summary.md")) {
		t.Errorf("stderr does not say what was written:\n%s", stderr)
	}
}

func TestBenchErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeSuite(t, dir, `[{"name": "e5-small-v2", "window_sets": [[100, 200]]}, {"name": "all-minilm-l6-v2", "window_sets": [[100]]}]`)
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "x", "out": "o", "datasets": [{"dir": "d"}], "models": [{"name": "m"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		empty bool // run with an empty cache: no model fetched
		code  int
		want  []string
	}{
		{"no suite flag", nil, false, exitUsage, []string{"suite"}},
		{"no such file", []string{"--suite", filepath.Join(dir, "absent.json")}, false, exitUsage, []string{"absent.json"}},
		{"invalid suite", []string{"--suite", bad}, false, exitUsage, []string{"model m has no window set"}},
		{"models not fetched", []string{"--suite", good}, true, exitFailure,
			[]string{"msrag model fetch e5-small-v2", "msrag model fetch all-minilm-l6-v2"}},
		{"models not fetched, --check", []string{"--suite", good, "--check"}, true, exitFailure,
			[]string{"msrag model fetch e5-small-v2"}},
		{"device number on the CPU", []string{"--suite", good, "--device-id", "3", "--device", "cpu"}, true, exitUsage,
			[]string{"bench: --device-id 3 with --device cpu"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.empty {
				t.Setenv(cache.Env, t.TempDir())
				t.Setenv(onnx.EnvOffline, "1") // refused, not fetched on first use
			}
			code, _, stderr := runCLI(t, "", append([]string{"bench"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("code %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Errorf("a suite that failed its check wrote its output directory")
	}
}
