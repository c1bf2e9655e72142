package report

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// SuiteRun is one evaluation of a suite (one dataset, model and window set)
// as the suite's summary shows it.
type SuiteRun struct {
	// Dataset names the dataset in the suite; Model and Windows the model
	// and its window set.
	Dataset string
	Model   string
	Windows []int
	// Dir is the run's output directory relative to the summary's, for links.
	Dir string
	// Eval is the run's results.json; nil when it did not run or failed.
	Eval *Eval
	// Err says why the run failed; "" when it did not.
	Err string
}

// Variant names the model and window set: "e5-small-v2 (100, 200, 500)".
func (r SuiteRun) Variant() string {
	return fmt.Sprintf("%s (%s)", r.Model, joinInts(r.Windows))
}

// WriteSuiteMarkdown writes the summary of a suite: nDCG@10 of the best
// single window against RRF for every dataset and model, the oracle's
// headroom, the combined recall@K figure (RecallPlot, written by
// WriteSuitePlots) and the runs with their timings and reports. title heads
// it, intro follows as a paragraph when not empty.
func WriteSuiteMarkdown(w io.Writer, title, intro string, runs []SuiteRun) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n", title)
	if intro != "" {
		fmt.Fprintf(bw, "%s\n\n", intro)
	}
	fmt.Fprintf(bw, "Values are means over each run's scored queries, times 100. The best window is the single "+
		"window size with the highest mean nDCG@10 in that run (chosen after the fact, so it flatters the naive "+
		"choice); full embeds each document whole, truncated to the model's maximum length, as MTEB does.\n\n")
	fmt.Fprintf(bw, "## Naive vs RRF (nDCG@10)\n\n")
	suiteNaive(runs).write(bw)
	fmt.Fprintf(bw, "## Oracle headroom\n\n")
	fmt.Fprintf(bw, "The oracle picks, per query and metric, the best single window using the relevance labels: "+
		"an upper bound on choosing one window size per query, not a retrieval method. Headroom is the oracle "+
		"minus the best single window; relative cdr@1 is that gain over the best window's cdr@1.\n\n")
	suiteOracle(runs).write(bw)
	fmt.Fprintf(bw, "## Correct-document recall@K\n\n")
	fmt.Fprintf(bw, "One panel per model and window set; per dataset rrf (solid) and the best single window "+
		"(dashed).\n\n![cdr@K of every dataset](%s.png)\n\n", RecallPlot)
	fmt.Fprintf(bw, "## Runs\n\n")
	suiteRuns(runs).write(bw)
	return bw.Flush()
}

// suiteNaive is the table of the best single window against RRF.
func suiteNaive(runs []SuiteRun) *table {
	const m = "ndcg_cut_10"
	t := &table{head: []string{"dataset", "split", "model", "windows", "queries", "best window",
		"its nDCG@10", "full", "maxp", "rrf", "rrf − best window"},
		right: []bool{false, false, false, false, true, true, true, true, true, true, true}}
	for _, r := range runs {
		e := r.Eval
		if e == nil {
			continue
		}
		best, rrf := e.BestWindow(m), e.Config("rrf")
		name, delta := "—", "—"
		if best != nil {
			name = best.Name
		}
		if bv, ok := best.mean(m); ok {
			if rv, ok := rrf.mean(m); ok {
				delta = fmt.Sprintf("%+.2f", 100*(rv-bv))
			}
		}
		t.rows = append(t.rows, []string{r.Dataset, e.Split, r.Model, joinInts(r.Windows), fmt.Sprint(e.Queries), name,
			best.cell(m), e.Config("full").cell(m), e.Config("maxp").cell(m), rrf.cell(m), delta})
	}
	return t
}

// suiteOracle is the table of the oracle's headroom over the best window.
func suiteOracle(runs []SuiteRun) *table {
	t := &table{head: []string{"dataset", "model", "windows", "nDCG@10 best window", "nDCG@10 oracle", "headroom",
		"cdr@1 best window", "cdr@1 rrf", "cdr@1 oracle", "headroom", "relative"},
		right: []bool{false, false, false, true, true, true, true, true, true, true, true}}
	for _, r := range runs {
		e := r.Eval
		if e == nil {
			continue
		}
		o := e.Config(KindOracle)
		row := []string{r.Dataset, r.Model, joinInts(r.Windows)}
		for _, m := range []string{"ndcg_cut_10", "cdr_1"} {
			best := e.BestWindow(m)
			bv, okb := best.mean(m)
			ov, oko := o.mean(m)
			gain := "—"
			if okb && oko {
				gain = fmt.Sprintf("%+.2f", 100*(ov-bv))
			}
			row = append(row, best.cell(m))
			if m == "cdr_1" {
				row = append(row, e.Config("rrf").cell(m))
			}
			row = append(row, o.cell(m), gain)
			if m == "cdr_1" {
				rel := "—"
				if okb && oko && bv > 0 {
					rel = fmt.Sprintf("%+.1f%%", 100*(ov-bv)/bv)
				}
				row = append(row, rel)
			}
		}
		t.rows = append(t.rows, row)
	}
	return t
}

// suiteRuns lists every run: its index, timings and report, or why it failed.
func suiteRuns(runs []SuiteRun) *table {
	t := &table{head: []string{"dataset", "model", "windows", "documents", "index", "build", "total", "report"},
		right: []bool{false, false, false, true, false, true, true, false}}
	for _, r := range runs {
		row := []string{r.Dataset, r.Model, joinInts(r.Windows)}
		switch e := r.Eval; {
		case e != nil:
			idx := "built"
			if e.Index.Reused {
				idx = "reused"
			}
			row = append(row, fmt.Sprint(e.Docs), idx, secs(e.Timings.Build), secs(e.Timings.Total),
				fmt.Sprintf("[%s](%s)", path.Join(r.Dir, "report.md"), path.Join(r.Dir, "report.md")))
		case r.Err != "":
			row = append(row, "—", "—", "—", "—", "failed: "+strings.ReplaceAll(r.Err, "|", "/"))
		default:
			row = append(row, "—", "—", "—", "—", "not run")
		}
		t.rows = append(t.rows, row)
	}
	return t
}
