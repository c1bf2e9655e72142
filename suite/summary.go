package suite

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/report"
)

// Run states in RunSummary.Status.
const (
	StatusDone    = "done"
	StatusFailed  = "failed"
	StatusPending = "not run"
	// StatusInterrupted is the run that was under way when the suite was
	// cancelled (Ctrl-C): it wrote nothing.
	StatusInterrupted = "interrupted"
)

// Summary is what a suite produced: summary.json.
type Summary struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	File        string    `json:"suite_file,omitempty"`
	Out         string    `json:"out"`
	Started     time.Time `json:"started"`
	// Seconds is the wall time of the whole suite so far.
	Seconds float64 `json:"seconds"`
	// Runs are in the order of the plan: dataset by dataset, each with
	// every model and window set.
	Runs  []RunSummary `json:"runs"`
	Files Files        `json:"files"`
}

// RunSummary is one run of a suite.
type RunSummary struct {
	// Name is the run's directory, relative to Out.
	Name       string `json:"name"`
	Dataset    string `json:"dataset"`
	DatasetDir string `json:"dataset_dir"`
	Split      string `json:"split"`
	Task       string `json:"task"`
	Model      string `json:"model"`
	Windows    []int  `json:"windows"`
	Index      string `json:"index"`
	// Status is StatusDone, StatusFailed (Error says why), StatusInterrupted
	// or StatusPending.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// IndexReused says whether the index was reused, Seconds the run's
	// wall time.
	IndexReused bool    `json:"index_reused,omitempty"`
	Seconds     float64 `json:"seconds,omitempty"`
	// BestWindow is the single window with the highest nDCG@10; Means
	// maps each configuration to its means of the summary's metrics.
	BestWindow string                        `json:"best_window,omitempty"`
	Means      map[string]map[string]float64 `json:"means,omitempty"`
	// Eval is the run's results.json (not in summary.json).
	Eval *report.Eval `json:"-"`
}

// Files are the files of the summary, in Out.
type Files struct {
	Summary string   `json:"summary"` // summary.json
	Report  string   `json:"report"`  // summary.md
	Plots   []string `json:"plots"`   // recall_at_k.png and .svg
	// MTEB are the MTEB result files of every run under Out/mteb/results.
	MTEB []string `json:"mteb"`
}

// summaryMetrics are the metrics RunSummary.Means keeps.
var summaryMetrics = []string{"ndcg_cut_10", "cdr_1", "cdr_10", "recall_100"}

func newSummary(s *Suite, p *Plan) *Summary {
	sum := &Summary{Name: s.Name, Description: s.Description, File: s.File, Out: p.Out, Started: time.Now().UTC()}
	for _, r := range p.Runs {
		sum.Runs = append(sum.Runs, RunSummary{Name: r.Name, Dataset: r.Dataset.Name, DatasetDir: r.Dataset.Dir,
			Split: r.Dataset.Split, Task: r.MTEB.Task, Model: r.Model, Windows: r.Windows, Index: r.Index, Status: StatusPending})
	}
	return sum
}

// done records a run's results.
func (rs *RunSummary) done(res *experiment.Result, secs float64) {
	e := res.Report
	rs.Status, rs.Eval, rs.Seconds, rs.IndexReused = StatusDone, e, secs, e.Index.Reused
	if b := e.BestWindow("ndcg_cut_10"); b != nil {
		rs.BestWindow = b.Name
	}
	rs.Means = map[string]map[string]float64{}
	for _, c := range e.Configs {
		m := map[string]float64{}
		for _, name := range summaryMetrics {
			if v, ok := c.Results.Mean[name]; ok {
				m[name] = v
			}
		}
		rs.Means[c.Name] = m
	}
}

// suiteRuns are the runs as package report takes them.
func (sum *Summary) suiteRuns() []report.SuiteRun {
	var out []report.SuiteRun
	for _, r := range sum.Runs {
		out = append(out, report.SuiteRun{Dataset: r.Dataset, Model: r.Model, Windows: r.Windows, Dir: r.Name, Eval: r.Eval, Err: r.Error})
	}
	return out
}

// Finished returns the number of runs done.
func (sum *Summary) Finished() int {
	n := 0
	for _, r := range sum.Runs {
		if r.Status == StatusDone {
			n++
		}
	}
	return n
}

// write writes summary.json and summary.md (and, once some run has
// results, the figure) into Out; with mteb it also gathers every run's MTEB
// files under Out/mteb.
func (sum *Summary) write(mteb bool) error {
	sum.Seconds = time.Since(sum.Started).Seconds()
	sum.Files.Summary = filepath.Join(sum.Out, "summary.json")
	sum.Files.Report = filepath.Join(sum.Out, "summary.md")
	runs := sum.suiteRuns()
	if sum.anyDone() {
		plots, err := report.WriteSuitePlots(sum.Out, runs)
		if err != nil {
			return err
		}
		sum.Files.Plots = plots
	}
	if mteb {
		sum.Files.MTEB = nil
		for _, r := range sum.Runs {
			if r.Eval == nil || r.Eval.MTEB == nil {
				continue
			}
			paths, err := experiment.WriteMTEB(filepath.Join(sum.Out, "mteb"), r.Eval)
			if err != nil {
				return err
			}
			sum.Files.MTEB = append(sum.Files.MTEB, paths...)
		}
	}
	if err := writeFile(sum.Files.Report, sum.WriteMarkdown); err != nil {
		return err
	}
	return writeFile(sum.Files.Summary, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	})
}

// WriteMarkdown writes summary.md: the suite's description, then the tables
// of report.WriteSuiteMarkdown.
func (sum *Summary) WriteMarkdown(w io.Writer) error {
	intro := fmt.Sprintf("%d runs, %.0f s in all.", len(sum.Runs), sum.Seconds)
	if sum.File != "" {
		intro = fmt.Sprintf("Suite file %s; %s", sum.File, intro)
	}
	if sum.Description != "" {
		intro = sum.Description + "\n\n" + intro
	}
	return report.WriteSuiteMarkdown(w, "Suite "+sum.Name, intro, sum.suiteRuns())
}

func (sum *Summary) anyDone() bool {
	for _, r := range sum.Runs {
		if r.Eval != nil {
			return true
		}
	}
	return false
}

// writeFile writes a file through fn, atomically.
func writeFile(path string, fn func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	if _, err := safefile.Write(path, fn); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	return nil
}
