package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/scripts"
)

// Files are the files Run wrote.
type Files struct {
	Results string   // results.json
	Report  string   // report.md
	Plots   []string // recall_at_k and oracle_best_window, PNG and SVG
	Runs    []string // one TREC run per configuration (runs/NAME.trec)
	Metrics string   // runs/metrics.json: the scores per run file (its name without .trec), for the check
	Qrels   string   // the judgements as one TSV file
	// Checker is runs/check_metrics.py (scripts/check_metrics.py), which
	// CheckCommand runs.
	Checker string
	// MTEB are the MTEB result files, one per configuration, under
	// mteb/results/ (WriteMTEB).
	MTEB []string
}

// write writes every output file into spec.Out, each atomically, and
// results.json last, listing the others with their sha256
// (report.Eval.Files). The files the old results.json lists are removed
// first, and it with them (cleanOut), so that the directory holds one run, a
// run stopped while it writes leaves no results.json, and one that stands
// beside files of another run is found out by report.ReadFile.
func write(spec Spec, ds *corpus.Dataset, res *Result) (Files, error) {
	f := Files{
		Results: filepath.Join(spec.Out, "results.json"),
		Report:  filepath.Join(spec.Out, "report.md"),
		Metrics: filepath.Join(spec.Out, "runs", "metrics.json"),
		Checker: filepath.Join(spec.Out, "runs", "check_metrics.py"),
	}
	if err := cleanOut(filepath.Clean(spec.Out), filepath.Clean(spec.Build.Out), spec.Log); err != nil {
		return f, err
	}
	if err := os.MkdirAll(filepath.Join(spec.Out, "runs"), 0o755); err != nil {
		return f, fmt.Errorf("experiment: %w", err)
	}
	// The files are independent: each is written on a core of its own.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	scores := map[string]eval.Results{}
	for _, c := range res.Report.Configs {
		if c.UpperBound {
			continue
		}
		path := filepath.Join(spec.Out, c.RunFile)
		g.Go(func() error {
			return writeWith(path, func(w io.Writer) error { return eval.WriteRun(w, res.Runs[c.Name], c.Name) })
		})
		f.Runs = append(f.Runs, path)
		scores[strings.TrimSuffix(filepath.Base(c.RunFile), ".trec")] = c.Results // as check_metrics.py names a run
	}
	mteb, err := MTEBFiles(res.Report)
	if errors.Is(err, ErrMainScore) {
		fmt.Fprintf(spec.Log, "eval: no MTEB result files: %v\n", err)
		res.Report.MTEB = nil
	} else if err != nil {
		g.Wait()
		return f, err
	}
	// From here on res.Report is only read, until every other file is
	// written and results.json lists them.
	g.Go(func() error { return writeJSON(f.Metrics, scores) })
	g.Go(func() error {
		return writeWith(f.Checker, func(w io.Writer) error { _, err := w.Write(scripts.CheckMetrics); return err })
	})
	g.Go(func() error {
		return writeWith(f.Report, func(w io.Writer) error { return report.WriteMarkdown(w, res.Report) })
	})
	g.Go(func() (err error) {
		f.Plots, err = report.WritePlots(spec.Out, res.Report)
		return err
	})
	g.Go(func() (err error) {
		f.MTEB, err = writeMTEBFiles(filepath.Join(spec.Out, "mteb"), mteb)
		return err
	})
	g.Go(func() (err error) {
		f.Qrels, err = qrelsFile(spec, ds, res.Qrels)
		return err
	})
	if err := g.Wait(); err != nil {
		return f, err
	}
	if res.Report.Files, err = report.OutputFiles(spec.Out, f.written(spec.Out)); err != nil {
		return f, err
	}
	return f, writeJSON(f.Results, res.Report)
}

// written returns the files written into out but results.json: the MTEB
// result files with the model_meta.json beside each, and the qrels file
// when it is not the dataset's.
func (f Files) written(out string) []string {
	paths := append([]string{f.Report, f.Metrics, f.Checker}, f.Runs...)
	paths = append(paths, f.Plots...)
	for _, m := range f.MTEB {
		paths = append(paths, m, filepath.Join(filepath.Dir(m), "model_meta.json"))
	}
	if rel, err := filepath.Rel(out, f.Qrels); err == nil && filepath.IsLocal(rel) {
		paths = append(paths, f.Qrels)
	}
	return paths
}

// removeFile removes path, if it is there, and syncs its directory.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("experiment: %w", err)
	}
	if err := safefile.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// qrelsFile returns the split's qrels file when it is one TSV file, and
// otherwise writes the judgements into runs/qrels-SPLIT.tsv.
func qrelsFile(spec Spec, ds *corpus.Dataset, q eval.Qrels) (string, error) {
	if files := ds.Qrels[spec.Split]; len(files) == 1 && strings.HasSuffix(files[0], ".tsv") {
		return files[0], nil
	}
	path := filepath.Join(spec.Out, "runs", "qrels-"+spec.Split+".tsv")
	return path, writeWith(path, func(w io.Writer) error { return eval.WriteQrels(w, q, eval.QrelsTSV) })
}

func writeJSON(path string, v any) error {
	return writeWith(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// writeWith writes a file through fn, atomically.
func writeWith(path string, fn func(io.Writer) error) error {
	if _, err := safefile.Write(path, fn); err != nil {
		return fmt.Errorf("experiment: %w", err)
	}
	return nil
}

// CheckCommand is the command line that checks every metric of the runs
// against pytrec_eval: runs/check_metrics.py (a copy of
// scripts/check_metrics.py, whose header says how to make a Python
// environment that has pytrec_eval) over the qrels, runs/metrics.json and
// the runs, each by its absolute path, so that it runs as printed from any
// directory.
func (f Files) CheckCommand() string {
	args := []string{"python3", absQuoted(f.Checker), "--qrels", absQuoted(f.Qrels), "--results", absQuoted(f.Metrics)}
	for _, r := range f.Runs {
		args = append(args, absQuoted(r))
	}
	return strings.Join(args, " ")
}

// absQuoted is path made absolute (as it is when that fails) and quoted for
// a POSIX shell.
func absQuoted(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		path = a
	}
	return shellQuote(path)
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
