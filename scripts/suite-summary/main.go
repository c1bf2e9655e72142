// Command suite-summary writes a suite's summary (summary.md and the
// recall@K figure, as msrag bench writes them) from msrag eval runs that were
// made one by one: for runs that cannot come from one suite file, such as a
// dataset evaluated with one export of a model and another dataset with
// another.
//
//	go run ./scripts/suite-summary OUT TITLE DATASET=MODEL=WINDOWS=RESULTS...
//
// WINDOWS is "100,200,500"; RESULTS an eval's results.json. Each run's link
// in summary.md is its RESULTS path as given.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/msrag/msrag/report"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: suite-summary OUT TITLE DATASET=MODEL=WINDOWS=RESULTS...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "suite-summary:", err)
		os.Exit(1)
	}
}

func run(out, title string, args []string) error {
	var runs []report.SuiteRun
	for _, a := range args {
		r, err := parseRun(a)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if _, err := report.WriteSuitePlots(out, runs); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(out, "summary.md"))
	if err != nil {
		return err
	}
	if err := report.WriteSuiteMarkdown(f, title, "", runs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// parseRun reads one DATASET=MODEL=WINDOWS=RESULTS argument and its results.
func parseRun(a string) (report.SuiteRun, error) {
	p := strings.SplitN(a, "=", 4)
	if len(p) != 4 {
		return report.SuiteRun{}, fmt.Errorf("%q: want DATASET=MODEL=WINDOWS=RESULTS", a)
	}
	var ws []int
	for _, s := range strings.Split(p[2], ",") {
		w, err := strconv.Atoi(s)
		if err != nil {
			return report.SuiteRun{}, fmt.Errorf("%q: window %q: %v", a, s, err)
		}
		ws = append(ws, w)
	}
	e, err := report.ReadFile(p[3])
	if err != nil {
		return report.SuiteRun{}, err
	}
	return report.SuiteRun{Dataset: p[0], Model: p[1], Windows: ws, Dir: filepath.Dir(p[3]), Eval: e}, nil
}
