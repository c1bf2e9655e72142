package experiment_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/report"
)

// TestResultsWrittenLast: results.json is written after every other file of
// the run and lists them with their sha256; a run that fails while it
// writes leaves no results.json (scripts take one as a finished run), and
// a file changed beside it (another run's) is an error when it is read.
func TestResultsWrittenLast(t *testing.T) {
	emb := hash(t)
	data, out := t.TempDir(), t.TempDir()
	if err := hashembed.WriteDataset(data, 60); err != nil {
		t.Fatal(err)
	}
	spec := experiment.Spec{Dataset: data, Split: "test", Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16)}, K: 10, ChannelK: 20}
	res, err := experiment.Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(out, "results.json")
	e, err := report.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, f := range e.Files {
		b, err := os.ReadFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if s := sha256.Sum256(b); hex.EncodeToString(s[:]) != f.SHA256 {
			t.Errorf("%s: sha256 %x, results.json says %s", f.Path, s, f.SHA256)
		}
		listed = append(listed, f.Path)
	}
	want := []string{"report.md", "runs/metrics.json"}
	for _, p := range append(slices.Clone(res.Files.Runs), res.Files.Plots...) {
		rel, _ := filepath.Rel(out, p)
		want = append(want, filepath.ToSlash(rel))
	}
	for _, w := range want {
		if !slices.Contains(listed, w) {
			t.Errorf("results.json does not list %s (it lists %v)", w, listed)
		}
	}

	// A second run fails while it writes: report.md cannot be replaced.
	reportMD := filepath.Join(out, "report.md")
	os.Remove(reportMD)
	os.MkdirAll(filepath.Join(reportMD, "x"), 0o755)
	if _, err := experiment.Run(context.Background(), spec); err == nil {
		t.Fatal("the run whose report.md cannot be written did not fail")
	}
	if _, err := os.Stat(results); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a run that failed while it wrote left results.json (%v)", err)
	}
	os.RemoveAll(reportMD)
	if _, err := experiment.Run(context.Background(), spec); err != nil {
		t.Fatal(err)
	}

	// A file of another run beside results.json.
	run := res.Files.Runs[0]
	os.WriteFile(run, []byte("q1 Q0 d1 1 1.0 other\n"), 0o644)
	if _, err := report.ReadFile(results); !errors.Is(err, report.ErrOtherRun) || !strings.Contains(err.Error(), run) {
		t.Errorf("results.json beside another run's %s: %v", run, err)
	}
}
