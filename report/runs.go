package report

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/msrag/msrag/eval"
)

// Scores are runs scored against one set of judgements, wherever the runs
// came from (TREC run files of any system): what msrag score prints, and
// msrag compare of runs with the paired comparisons.
type Scores struct {
	// Qrels names the judgements.
	Qrels string `json:"qrels"`
	// Scoring is the rules beyond the metrics each run was scored with
	// (MTEB's per-task rules) and the hits they dropped over all runs.
	Scoring Scoring `json:"scoring"`
	// Runs are the runs in the order given.
	Runs []ScoredRun `json:"runs"`
	// Metric is the metric of the paired comparisons, and Paired[i] run
	// i+1 against the first run (the baseline); Holm's adjustment is over
	// them when there are several (Compare).
	Metric string        `json:"metric,omitempty"`
	Paired []eval.Paired `json:"paired,omitempty"`
}

// ScoredRun is one run and its scores.
type ScoredRun struct {
	Name    string       `json:"name"`
	Path    string       `json:"path"`
	Results eval.Results `json:"results"`
}

// ScoreRuns scores each run of runs (named names, read from paths) against
// qrels on metrics (none: eval.DefaultMetrics, MTEB's), each with sc's
// rules applied first.
func ScoreRuns(qrels eval.Qrels, sc Scoring, names, paths []string, runs []eval.Run, metrics ...string) (*Scores, error) {
	if len(metrics) == 0 {
		metrics = eval.DefaultMetrics()
	}
	s := &Scores{Scoring: sc}
	for i, run := range runs {
		run, n := sc.Apply(run)
		s.Scoring.Dropped += n
		r, err := eval.Evaluate(qrels, run, metrics...)
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", paths[i], err)
		}
		s.Runs = append(s.Runs, ScoredRun{Name: names[i], Path: paths[i], Results: r})
	}
	return s, nil
}

// Compare pairs every run with the first on metric (eval.Compare) and,
// with three runs or more, adjusts the p-values by Holm over those
// comparisons (eval.AdjustHolm).
func (s *Scores) Compare(metric string) error {
	if len(s.Runs) < 2 {
		return fmt.Errorf("report: comparing runs needs two or more, got %d", len(s.Runs))
	}
	s.Metric, s.Paired = metric, nil
	for _, r := range s.Runs[1:] {
		p, err := eval.Compare(r.Results, s.Runs[0].Results, metric)
		if err != nil {
			return fmt.Errorf("report: %s against %s: %w", r.Name, s.Runs[0].Name, err)
		}
		s.Paired = append(s.Paired, p)
	}
	family := make([]*eval.Paired, len(s.Paired))
	for i := range s.Paired {
		family[i] = &s.Paired[i]
	}
	eval.AdjustHolm(family)
	return nil
}

// WriteScores writes the runs' tables, those of msrag eval's report: the
// main metrics, correct-document recall at K and, after Compare, the paired
// comparisons with the first run.
func WriteScores(w io.Writer, s *Scores) error {
	e := &Eval{}
	for _, r := range s.Runs {
		e.Configs = append(e.Configs, Config{Name: r.Name, RunFile: r.Path, Results: r.Results})
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d run(s) scored against %s", len(s.Runs), s.Qrels)
	if s.Scoring.Any() {
		fmt.Fprintf(bw, " with ignore_identical_ids %v, skip_first_result %v (%s): %d hits dropped",
			s.Scoring.IgnoreIdenticalIDs, s.Scoring.SkipFirstResult, s.Scoring.Source, s.Scoring.Dropped)
	}
	fmt.Fprint(bw, ".\n\n")
	t := &table{head: []string{"run", "queries"}, right: []bool{false, true}}
	for _, m := range wideMetrics {
		t.head, t.right = append(t.head, metricLabel(m)), append(t.right, true)
	}
	for i := range e.Configs {
		c := &e.Configs[i]
		row := []string{c.Name, fmt.Sprint(c.Results.NumQueries)}
		for _, m := range wideMetrics {
			row = append(row, c.cell(m))
		}
		t.rows = append(t.rows, row)
	}
	t.write(bw)
	for _, r := range s.Runs {
		if n := len(r.Results.Unscored); n > 0 {
			fmt.Fprintf(bw, "%s ranks nothing for %d judged queries (such as %q): they are not scored, as pytrec_eval leaves them out.\n\n", r.Name, n, r.Results.Unscored[0])
		}
	}
	fmt.Fprint(bw, "Correct-document recall@K:\n\n")
	e.cdrTable().write(bw)
	if len(s.Paired) > 0 {
		writeRunsPaired(bw, s)
	}
	return bw.Flush()
}

// writeRunsPaired writes every run's paired comparison with the first.
func writeRunsPaired(bw io.Writer, s *Scores) {
	base := s.Runs[0]
	fmt.Fprintf(bw, "Paired against %s on %s over the queries both score: the mean difference, its 95%% bootstrap interval, "+
		"the queries won, tied and lost, and the two-sided p-values of the paired t-test and of Fisher's randomization test%s.\n\n",
		base.Name, metricLabel(s.Metric), holmNote(len(s.Paired)))
	t := &table{head: []string{"run", metricLabel(s.Metric), "− " + base.Name, "95% interval", "win/tie/loss", "p (t-test)", "p (randomization)"},
		right: []bool{false, true, true, true, true, true, true}}
	v, _ := (&Config{Results: base.Results}).mean(s.Metric)
	t.rows = append(t.rows, []string{base.Name + " (baseline)", pct(v), "", "", "", "", ""})
	for i, p := range s.Paired {
		c := &Config{Results: s.Runs[i+1].Results}
		t.rows = append(t.rows, append([]string{s.Runs[i+1].Name, c.cell(s.Metric)}, pairedStats(p)...))
	}
	t.write(bw)
}

// holmNote says that the p-values are Holm-adjusted, with n comparisons of
// one baseline.
func holmNote(n int) string {
	if n < 2 {
		return ""
	}
	return fmt.Sprintf(", each adjusted by Holm over the %d comparisons (raw in parentheses)", n)
}

// pairedStats are a comparison's cells: difference, interval,
// win/tie/loss and the two p-values (Holm-adjusted, with the raw ones in
// parentheses, when adjusted).
func pairedStats(p eval.Paired) []string {
	pt, pr := pValue(p.PT), pValue(p.PRandomization)
	if p.PTHolm != nil {
		pt = pValue(*p.PTHolm) + " (" + pt + ")"
	}
	if p.PRandomizationHolm != nil {
		pr = pValue(*p.PRandomizationHolm) + " (" + pr + ")"
	}
	if p.RandomizationTrials > 0 {
		pr += fmt.Sprintf(" ±%.4f", 2*math.Sqrt(p.PRandomization*(1-p.PRandomization)/float64(p.RandomizationTrials)))
	}
	return []string{fmt.Sprintf("%+.2f", 100*p.Diff), fmt.Sprintf("[%+.2f, %+.2f]", 100*p.Lo, 100*p.Hi),
		fmt.Sprintf("%d/%d/%d", p.Wins, p.Ties, p.Losses), pt, pr}
}

// pValue writes a p-value with four significant digits.
func pValue(p float64) string { return fmt.Sprintf("%.4g", p) }
