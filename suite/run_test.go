package suite_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/suite"
)

// hashTokenizer skips unless the tokenizer of the test embedder is present
// (or fails under CI, where it must be).
func hashTokenizer(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(onnx.ModelsDir(), "all-minilm-l6-v2", onnx.TokenizerFile)); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("the test embedder's tokenizer is absent (scripts/setup.sh): %v", err)
		}
		tb.Fatal(err)
	}
}

// TestRun runs two datasets with the test embedder at two window sets,
// checks the summary, the per-run outputs and the MTEB tree, then runs the
// suite again and finds every index reused.
func TestRun(t *testing.T) {
	hashTokenizer(t)
	root := t.TempDir()
	writeDataset(t, filepath.Join(root, "data", "alpha"), 30, 8, false)
	writeDataset(t, filepath.Join(root, "data", "beta"), 20, 6, false)
	file := filepath.Join(root, "suites", "t.json")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := `{"name": "t", "description": "Two tiny sets.", "out": "../out", "k": 20, "window_k": 20,
		"datasets": [{"dir": "../data/alpha", "task": "AlphaRetrieval", "force_task": true}, {"dir": "../data/beta"}],
		"models": [{"name": "hash-test-embedder", "window_sets": [[8, 16], [24]]}]}`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	s.Log = &log
	progress := map[string]int{}
	s.Progress = func(run string) (func(msrag.Progress), func()) {
		return func(msrag.Progress) { progress[run]++ }, func() { progress[run+" done"]++ }
	}
	sum, err := suite.Run(context.Background(), s)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkOutput(t, filepath.Join(root, "out"), sum, progress)

	// Again: every index is reused.
	sum, err = suite.Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sum.Runs {
		if !r.IndexReused {
			t.Errorf("second run of %s built its index again", r.Name)
		}
	}
}

// checkOutput checks what TestRun's suite wrote into out.
func checkOutput(t *testing.T, out string, sum *suite.Summary, progress map[string]int) {
	t.Helper()
	names := []string{"alpha-hash-test-embedder-w8-16", "alpha-hash-test-embedder-w24", "beta-hash-test-embedder-w8-16", "beta-hash-test-embedder-w24"}
	if len(sum.Runs) != 4 {
		t.Fatalf("%d runs", len(sum.Runs))
	}
	for i, r := range sum.Runs {
		if r.Name != names[i] || r.Status != suite.StatusDone || r.IndexReused || r.Means["rrf"]["ndcg_cut_10"] == 0 && r.Means["rrf"]["cdr_10"] == 0 {
			t.Errorf("run %d: %+v", i, r)
		}
		if _, err := os.Stat(filepath.Join(out, r.Name, "report.md")); err != nil {
			t.Errorf("run %s has no report: %v", r.Name, err)
		}
		if progress[r.Name+" done"] != 1 {
			t.Errorf("run %s: progress done called %d times", r.Name, progress[r.Name+" done"])
		}
	}
	for _, f := range []string{"summary.json", "summary.md", "recall_at_k.png", "recall_at_k.svg",
		"indices/alpha-hash-test-embedder-w8-16/manifest.json", "indices/beta-hash-test-embedder-w24/manifest.json",
		"mteb/results/msrag__hash-test-embedder-w8-16-rrf/no_revision_available/AlphaRetrieval.json",
		"mteb/results/msrag__hash-test-embedder-w24-oracle/no_revision_available/beta.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("suite output: %v", err)
		}
	}
	// 4 runs: 2 with w8, w16, rrf, maxp, full, oracle; 2 with w24, rrf, maxp, full, oracle.
	if len(sum.Files.MTEB) != 2*6+2*5 {
		t.Errorf("%d MTEB files gathered, want %d", len(sum.Files.MTEB), 2*6+2*5)
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	for _, want := range []string{"# Suite t\n\nTwo tiny sets.", "## Naive vs RRF (nDCG@10)", "## Oracle headroom",
		"| alpha | test | hash-test-embedder | 8, 16 |", "[beta-hash-test-embedder-w24/report.md](beta-hash-test-embedder-w24/report.md)"} {
		if !bytes.Contains(md, []byte(want)) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}

// TestRunGoesOnAfterAFailure checks that a run that fails (a corpus that
// breaks off into a line that is not JSON) is recorded, the other runs are
// done, and Run reports the failure.
func TestRunGoesOnAfterAFailure(t *testing.T) {
	hashTokenizer(t)
	root := t.TempDir()
	writeDataset(t, filepath.Join(root, "bad"), 10, 3, true)
	writeDataset(t, filepath.Join(root, "good"), 10, 3, false)
	opened := 0
	s := suite.Suite{Name: "t", Dir: root, Out: "out", K: 10, ChannelK: 10,
		Datasets: []suite.Dataset{{Dir: "bad"}, {Dir: "good"}},
		Models:   []suite.Model{{Name: hashembed.Name, WindowSets: [][]int{{8}}}},
		Open: func(name string) (msrag.Embedder, error) {
			opened++
			return suite.OpenModel(context.Background(), name, embed.Options{})
		}}
	sum, err := suite.Run(context.Background(), s)
	if err == nil || !strings.Contains(err.Error(), "run bad-hash-test-embedder-w8") {
		t.Fatalf("Run: %v, want the failure of the bad run", err)
	}
	if sum == nil || sum.Runs[0].Status != suite.StatusFailed || sum.Runs[1].Status != suite.StatusDone {
		t.Fatalf("summary: %+v", sum)
	}
	// Once to check the model, once to run its datasets.
	if opened != 2 {
		t.Errorf("the model was opened %d times, want 2", opened)
	}
	md, err := os.ReadFile(filepath.Join(root, "out", "summary.md"))
	if err != nil || !bytes.Contains(md, []byte("| bad | hash-test-embedder | 8 | — | — | — | — | failed: suite: run bad")) {
		t.Errorf("summary.md does not list the failure (%v):\n%s", err, md)
	}
	e, err := report.ReadFile(filepath.Join(root, "out", "good-hash-test-embedder-w8", "results.json"))
	if err != nil || e.Queries != 3 {
		t.Errorf("good run: %v", err)
	}

	// A cancelled context stops the suite with what is done.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := suite.Run(ctx, s); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestCheckWindowsFit checks that a window set longer than the model takes
// fails the check, naming the model and the set.
func TestCheckWindowsFit(t *testing.T) {
	hashTokenizer(t)
	root := t.TempDir()
	writeDataset(t, filepath.Join(root, "good"), 10, 3, false)
	s := suite.Suite{Name: "t", Dir: root, Out: "out", Datasets: []suite.Dataset{{Dir: "good"}},
		Models: []suite.Model{{Name: hashembed.Name, WindowSets: [][]int{{100}, {100, 600}}}}}
	p, err := suite.Check(context.Background(), s)
	if !errors.Is(err, suite.ErrModel) || !strings.Contains(err.Error(), "model hash-test-embedder, window set [100 600]") ||
		!strings.Contains(err.Error(), "exceeds the model's maximum") {
		t.Fatalf("Check: %v", err)
	}
	if p == nil || len(p.Runs) != 2 {
		t.Errorf("the plan of a suite that fails its check: %v", p)
	}
}

// TestRunInterrupted: a suite cancelled mid-way keeps what finished: the
// summary lists the finished run as done with its MTEB files gathered, and
// the run under way as interrupted.
func TestRunInterrupted(t *testing.T) {
	hashTokenizer(t)
	root := t.TempDir()
	writeDataset(t, filepath.Join(root, "first"), 10, 3, false)
	writeDataset(t, filepath.Join(root, "second"), 10, 3, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := suite.Suite{Name: "t", Dir: root, Out: "out", K: 10, ChannelK: 10,
		Datasets: []suite.Dataset{{Dir: "first"}, {Dir: "second"}},
		Models:   []suite.Model{{Name: hashembed.Name, WindowSets: [][]int{{8}}}},
		Progress: func(run string) (func(msrag.Progress), func()) {
			if strings.HasPrefix(run, "second") {
				cancel() // Ctrl-C as the second run starts
			}
			return nil, nil
		}}
	sum, err := suite.Run(ctx, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if sum == nil || sum.Runs[0].Status != suite.StatusDone || sum.Runs[1].Status != suite.StatusInterrupted {
		t.Fatalf("summary: %+v", sum)
	}
	if len(sum.Files.MTEB) == 0 {
		t.Fatal("no MTEB file gathered for the finished run")
	}
	for _, f := range sum.Files.MTEB {
		if _, err := os.Stat(f); err != nil || !strings.Contains(f, "first") && !strings.Contains(filepath.Base(f), "first") {
			t.Errorf("MTEB file %s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(root, "out", "summary.md"))
	if !bytes.Contains(md, []byte("interrupted")) {
		t.Errorf("summary.md does not mark the interrupted run:\n%s", md)
	}
}
