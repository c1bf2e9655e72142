package experiment

import (
	"fmt"
	"path/filepath"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/report"
)

// score evaluates every configuration's run and forms the oracle over the
// single windows.
func score(spec Spec, res *Result) error {
	var names []string
	var singles []eval.Results
	for _, c := range spec.Configs {
		if c.Kind == KindOracle {
			res.Report.Configs = append(res.Report.Configs, report.Config{Name: c.Name, Kind: c.reportKind(), UpperBound: true})
			continue
		}
		r, err := eval.Evaluate(res.Qrels, res.Runs[c.Name], eval.DefaultMetrics()...)
		if err != nil {
			return fmt.Errorf("experiment: configuration %s: %w", c.Name, err)
		}
		res.Report.Configs = append(res.Report.Configs, report.Config{Name: c.Name, Kind: c.reportKind(), Fusion: c.fusionText(),
			Windows: windowSizes(c), RunFile: filepath.Join("runs", c.fileName()), Results: r})
		if c.Kind == KindWindow {
			names, singles = append(names, c.Name), append(singles, r)
		}
	}
	if o := res.Report.Config(report.KindOracle); o != nil {
		if err := fillOracle(res.Report, o, names, singles); err != nil {
			return err
		}
	}
	return pair(res.Report)
}

// PairedMetric is the metric configurations are compared on, query by query.
const PairedMetric = "ndcg_cut_10"

// pair compares every configuration with the best single window (chosen
// after the fact, which flatters it) and with rrf.
func pair(e *report.Eval) error {
	e.PairedMetric = PairedMetric
	base := map[string]*report.Config{"best_window": e.BestWindow(PairedMetric), "rrf": e.Config("rrf")}
	for i := range e.Configs {
		c := &e.Configs[i]
		for name, b := range base {
			if b == nil || b == c {
				continue
			}
			p, err := eval.Compare(c.Results, b.Results, PairedMetric)
			if err != nil {
				return fmt.Errorf("experiment: comparing %s with %s: %w", c.Name, b.Name, err)
			}
			if c.Paired == nil {
				c.Paired = map[string]eval.Paired{}
			}
			c.Paired[name] = p
		}
	}
	return nil
}

// windowSizes lists the sliding window sizes a configuration fuses (none for
// the full window and for every window of the index).
func windowSizes(c Config) []int {
	var out []int
	for _, w := range c.Fusion.Windows {
		var n int
		if _, err := fmt.Sscanf(w, "w%d", &n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func fillOracle(e *report.Eval, o *report.Config, names []string, singles []eval.Results) error {
	if len(singles) == 0 {
		return fmt.Errorf("experiment: the oracle needs single windows")
	}
	or, err := eval.Oracle(names, singles)
	if err != nil {
		return fmt.Errorf("experiment: oracle: %w", err)
	}
	o.Results = or.Results
	e.Oracle = &report.Oracle{Over: names, HistogramMetric: "ndcg_cut_10", Best: or.Best,
		BestCounts: map[string][]int{}, Ties: map[string]int{}}
	for _, m := range []string{"ndcg_cut_10", "cdr_1"} {
		e.Oracle.BestCounts[m] = or.BestCounts(m)
		e.Oracle.Ties[m] = allEqual(singles, m)
	}
	return nil
}

// allEqual counts the queries on which every result has the same value of metric.
func allEqual(rs []eval.Results, metric string) int {
	n := 0
	for qid, vals := range rs[0].PerQuery {
		same := true
		for _, r := range rs[1:] {
			if r.PerQuery[qid][metric] != vals[metric] {
				same = false
				break
			}
		}
		if same {
			n++
		}
	}
	return n
}
