package eval

import (
	"fmt"
	"slices"
)

// OracleResult is, per query and metric, the best value any configuration
// reached: an upper bound on what picking one configuration per query can
// achieve, given the relevance labels.
type OracleResult struct {
	// Configs names the configurations, in the order given to [Oracle].
	Configs []string `json:"configs"`
	// Results holds the best values. Its Mean averages them over the queries
	// scored by every configuration.
	Results
	// Best maps query id -> metric name -> index into Configs of the
	// configuration that reached the best value; on a tie, the first one.
	Best map[string]map[string]int `json:"best"`
}

// Oracle combines the results of several configurations (named by names, one
// per result) of the same queries. All results must have the same metrics
// and score the same queries; otherwise the error wraps [ErrMismatch].
func Oracle(names []string, results []Results) (OracleResult, error) {
	if len(names) != len(results) || len(results) == 0 {
		return OracleResult{}, fmt.Errorf("%w: %d names for %d results", ErrMismatch, len(names), len(results))
	}
	base := results[0]
	for i, r := range results[1:] {
		if !slices.Equal(r.Metrics, base.Metrics) {
			return OracleResult{}, fmt.Errorf("%w: configuration %q has metrics %v, %q has %v", ErrMismatch, names[i+1], r.Metrics, names[0], base.Metrics)
		}
		if len(r.PerQuery) != len(base.PerQuery) {
			return OracleResult{}, fmt.Errorf("%w: configuration %q scores %d queries, %q scores %d", ErrMismatch, names[i+1], len(r.PerQuery), names[0], len(base.PerQuery))
		}
		for qid := range base.PerQuery {
			if _, ok := r.PerQuery[qid]; !ok {
				return OracleResult{}, fmt.Errorf("%w: configuration %q does not score query %q", ErrMismatch, names[i+1], qid)
			}
		}
	}
	out := OracleResult{
		Configs: slices.Clone(names),
		Results: Results{
			Metrics:    slices.Clone(base.Metrics),
			NumQueries: len(base.PerQuery),
			Mean:       make(map[string]float64, len(base.Metrics)),
			PerQuery:   make(map[string]map[string]float64, len(base.PerQuery)),
			Unscored:   slices.Clone(base.Unscored),
			Unjudged:   slices.Clone(base.Unjudged),
		},
		Best: make(map[string]map[string]int, len(base.PerQuery)),
	}
	qids := sortedKeys(base.PerQuery)
	for _, qid := range qids {
		vals := make(map[string]float64, len(base.Metrics))
		best := make(map[string]int, len(base.Metrics))
		for _, m := range base.Metrics {
			bi, bv := 0, results[0].PerQuery[qid][m]
			for i, r := range results[1:] {
				if v := r.PerQuery[qid][m]; v > bv {
					bi, bv = i+1, v
				}
			}
			vals[m], best[m] = bv, bi
		}
		out.PerQuery[qid], out.Best[qid] = vals, best
	}
	for _, m := range base.Metrics {
		sum := 0.0
		for _, qid := range qids {
			sum += out.PerQuery[qid][m]
		}
		if len(qids) > 0 {
			sum /= float64(len(qids))
		}
		out.Mean[m] = sum
	}
	return out, nil
}

// BestCounts returns, for metric, how many queries each configuration was
// the (first) best for, indexed like Configs: the histogram of oracle picks.
func (o OracleResult) BestCounts(metric string) []int {
	counts := make([]int, len(o.Configs))
	for _, best := range o.Best {
		if i, ok := best[metric]; ok {
			counts[i]++
		}
	}
	return counts
}
