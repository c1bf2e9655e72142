package experiment

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/report"
)

// score evaluates every configuration's run and forms the oracles over the
// single channels of layout, the channels the evaluation fuses.
func score(spec Spec, layout msrag.Layout, res *Result) error {
	var singles []single
	files := map[string]bool{}
	for _, c := range spec.Configs {
		rc := report.Config{Name: c.Name, Kind: c.reportKind(), Channels: channelKinds(c, layout)}
		if c.Ranking == ByOracle {
			rc.UpperBound = true
			res.Report.Configs = append(res.Report.Configs, rc)
			continue
		}
		r, err := eval.Evaluate(res.Qrels, res.Runs[c.Name], eval.DefaultMetrics()...)
		if err != nil {
			return fmt.Errorf("experiment: configuration %s: %w", c.Name, err)
		}
		rc.Fusion, rc.Windows, rc.RunFile, rc.Results = c.fusionText(), windowSizes(c), runFile(c, files), r
		res.Report.Configs = append(res.Report.Configs, rc)
		if c.Ranking == ByChannel {
			singles = append(singles, single{name: c.Name, kind: layout[layout.Index(c.Name)].Kind, results: r})
		}
	}
	for _, c := range spec.Configs {
		if c.Ranking != ByOracle {
			continue
		}
		if err := fillOracle(res.Report, c, singles); err != nil {
			return err
		}
	}
	return pair(res.Report)
}

// runFile is the run file of c, runs/NAME.trec (Config.fileName), with
// -2, -3, ... before .trec when another configuration's name is written the
// same; taken records the names given.
func runFile(c Config, taken map[string]bool) string {
	name := c.fileName()
	base := strings.TrimSuffix(name, ".trec")
	for i := 2; taken[name]; i++ {
		name = fmt.Sprintf("%s-%d.trec", base, i)
	}
	taken[name] = true
	return filepath.Join("runs", name)
}

// single is one channel alone, scored.
type single struct {
	name    string
	kind    msrag.ChannelKind
	results eval.Results
}

// PairedMetric is the metric configurations are compared on, query by query.
const PairedMetric = "ndcg_cut_10"

// pair compares every configuration with the report's baselines
// (report.Eval.PairedBaselines), the p-values Holm-adjusted over the
// configurations each baseline meets.
func pair(e *report.Eval) error {
	e.PairedMetric = PairedMetric
	base := e.PairedBaselines(PairedMetric)
	type job struct {
		c    *report.Config
		name string
		b    *report.Config
		p    eval.Paired
	}
	var jobs []*job
	for i := range e.Configs {
		c := &e.Configs[i]
		for name, b := range base {
			if b != nil && b != c {
				jobs = append(jobs, &job{c: c, name: name, b: b})
			}
		}
	}
	// Each comparison's bootstrap is seeded by itself alone: run at once on
	// every core, they give what they give one after the other.
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		g.Go(func() (err error) {
			if j.p, err = eval.Compare(j.c.Results, j.b.Results, PairedMetric); err != nil {
				return fmt.Errorf("experiment: comparing %s with %s: %w", j.c.Name, j.b.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	// One baseline meets every configuration but the upper bounds: Holm
	// adjusts the p-values over them.
	families := map[string][]*eval.Paired{}
	for _, j := range jobs {
		if !j.c.UpperBound {
			families[j.name] = append(families[j.name], &j.p)
		}
	}
	for _, f := range families {
		eval.AdjustHolm(f)
	}
	for _, j := range jobs {
		if j.c.Paired == nil {
			j.c.Paired = map[string]eval.Paired{}
		}
		j.c.Paired[j.name] = j.p
	}
	return nil
}

// windowSizes lists the sliding window sizes a configuration fuses (none for
// the full window and for every window of the index).
func windowSizes(c Config) []int {
	var out []int
	for _, w := range c.Fusion.Channels {
		var n int
		if _, err := fmt.Sscanf(w, "w%d", &n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// fillOracle forms oracle configuration c from the single channels of its
// kinds; the oracle over every channel also describes its picks
// (Eval.Oracle).
func fillOracle(e *report.Eval, c Config, all []single) error {
	var names []string
	var singles []eval.Results
	for _, s := range all {
		if c.OracleOf == nil || slices.Contains(c.OracleOf, s.kind) {
			names, singles = append(names, s.name), append(singles, s.results)
		}
	}
	if len(singles) == 0 {
		return fmt.Errorf("experiment: %s needs single windows", c.Name)
	}
	or, err := eval.Oracle(names, singles)
	if err != nil {
		return fmt.Errorf("experiment: %s: %w", c.Name, err)
	}
	e.Config(c.Name).Results = or.Results
	if c.OracleOf != nil {
		return nil
	}
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
