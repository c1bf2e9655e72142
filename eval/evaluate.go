package eval

import (
	"fmt"
	"math"
	"slices"
)

// Results holds metric values per query and their means.
type Results struct {
	// Metrics lists the metric names in the order they were asked for.
	Metrics []string `json:"metrics"`
	// NumQueries is the number of scored queries: those in both qrels and run.
	NumQueries int `json:"num_queries"`
	// Mean maps a metric name to its mean over the scored queries (0 when
	// there are none).
	Mean map[string]float64 `json:"mean"`
	// PerQuery maps a scored query id to its metric values.
	PerQuery map[string]map[string]float64 `json:"per_query"`
	// Unscored lists, sorted, the queries of the qrels missing from the run.
	Unscored []string `json:"unscored,omitempty"`
	// Unjudged lists, sorted, the queries of the run missing from the qrels.
	Unjudged []string `json:"unjudged,omitempty"`
}

// Evaluate scores run against qrels with the named metrics (see
// [ParseMetric]; none means [DefaultMetrics]). The package documentation
// describes which queries are scored and how rankings are ordered. Neither
// argument is modified. A repeated metric name, an unknown one, a duplicate
// document in a query's hits or a score that is NaN is an error.
func Evaluate(qrels Qrels, run Run, metrics ...string) (Results, error) {
	if len(metrics) == 0 {
		metrics = DefaultMetrics()
	}
	parsed := make([]Metric, len(metrics))
	seen := make(map[string]bool, len(metrics))
	depth := 0 // how many ranks the metrics look at; -1: all
	for i, name := range metrics {
		m, err := ParseMetric(name)
		if err != nil {
			return Results{}, err
		}
		if seen[name] {
			return Results{}, fmt.Errorf("%w: %q asked twice", ErrMetric, name)
		}
		seen[name] = true
		parsed[i] = m
		if m.Family == RecipRank {
			depth = -1
		} else if depth >= 0 {
			depth = max(depth, m.K)
		}
	}
	res := Results{
		Metrics:  slices.Clone(metrics),
		Mean:     make(map[string]float64, len(metrics)),
		PerQuery: make(map[string]map[string]float64),
	}
	var s scorer
	for _, qid := range sortedKeys(run) {
		rels, ok := qrels[qid]
		if !ok {
			res.Unjudged = append(res.Unjudged, qid)
			continue
		}
		vals, err := s.query(qid, rels, run[qid], parsed, metrics, depth)
		if err != nil {
			return Results{}, err
		}
		res.PerQuery[qid] = vals
	}
	for _, qid := range sortedKeys(qrels) {
		if _, ok := run[qid]; !ok {
			res.Unscored = append(res.Unscored, qid)
		}
	}
	res.NumQueries = len(res.PerQuery)
	qids := sortedKeys(res.PerQuery)
	for _, name := range metrics {
		sum := 0.0
		for _, qid := range qids {
			sum += res.PerQuery[qid][name]
		}
		if len(qids) > 0 {
			sum /= float64(len(qids))
		}
		res.Mean[name] = sum
	}
	return res, nil
}

// scorer keeps buffers reused across queries.
type scorer struct {
	hits  []Hit
	gains []int // level of each ranked hit, 0 when not relevant
	exact []int // the same in MTEB's order, for MRR (see compareHitsExact)
	ideal []int // positive levels of the judged documents, descending
	seen  map[string]struct{}
}

func (s *scorer) query(qid string, rels map[string]int, hits []Hit, ms []Metric, names []string, depth int) (map[string]float64, error) {
	if s.seen == nil {
		s.seen = make(map[string]struct{})
	}
	clear(s.seen)
	for _, h := range hits {
		if math.IsNaN(h.Score) {
			return nil, fmt.Errorf("%w: query %q, document %q has score NaN", ErrScore, qid, h.Doc)
		}
		if _, dup := s.seen[h.Doc]; dup {
			return nil, fmt.Errorf("%w: query %q lists document %q twice", ErrDuplicate, qid, h.Doc)
		}
		s.seen[h.Doc] = struct{}{}
	}
	s.hits = append(s.hits[:0], hits...)
	SortHits(s.hits)
	n := len(s.hits)
	if depth >= 0 {
		n = min(n, depth)
	}
	s.gains = levels(s.gains[:0], s.hits[:n], rels)
	if slices.ContainsFunc(ms, func(m Metric) bool { return m.Family == MRR }) {
		slices.SortStableFunc(s.hits, compareHitsExact)
		s.exact = levels(s.exact[:0], s.hits[:n], rels)
	}
	s.ideal = s.ideal[:0]
	for _, lvl := range rels {
		if lvl > 0 {
			s.ideal = append(s.ideal, lvl)
		}
	}
	slices.Sort(s.ideal)
	slices.Reverse(s.ideal)
	numRel := len(s.ideal)

	vals := make(map[string]float64, len(ms))
	for i, m := range ms {
		vals[names[i]] = s.metric(m, numRel)
	}
	return vals, nil
}

// metric computes one metric of the current query from s.gains and s.ideal.
func (s *scorer) metric(m Metric, numRel int) float64 {
	g := s.gains
	if m.Family != RecipRank {
		g = g[:min(len(g), m.K)]
	}
	switch m.Family {
	case NDCGCut:
		ideal := dcg(s.ideal[:min(len(s.ideal), m.K)])
		if ideal == 0 {
			return 0
		}
		return dcg(g) / ideal
	case MAPCut:
		if numRel == 0 {
			return 0
		}
		sum, found := 0.0, 0
		for i, lvl := range g {
			if lvl > 0 {
				found++
				sum += float64(found) / float64(i+1)
			}
		}
		return sum / float64(numRel)
	case Recall:
		if numRel == 0 {
			return 0
		}
		return float64(countRel(g)) / float64(numRel)
	case Precision:
		return float64(countRel(g)) / float64(m.K)
	case MRR, RecipRank:
		if m.Family == MRR {
			g = s.exact[:min(len(s.exact), m.K)]
		}
		for i, lvl := range g {
			if lvl > 0 {
				return 1 / float64(i+1)
			}
		}
		return 0
	case CDR:
		if countRel(g) > 0 {
			return 1
		}
		return 0
	}
	panic("eval: unhandled metric family " + m.Family.String())
}

// levels appends the relevance level of each hit (0 when not relevant) to dst.
func levels(dst []int, hits []Hit, rels map[string]int) []int {
	for _, h := range hits {
		dst = append(dst, max(rels[h.Doc], 0))
	}
	return dst
}

func dcg(levels []int) float64 {
	sum := 0.0
	for i, lvl := range levels {
		if lvl > 0 {
			sum += float64(lvl) / math.Log2(float64(i+2))
		}
	}
	return sum
}

func countRel(levels []int) int {
	n := 0
	for _, lvl := range levels {
		if lvl > 0 {
			n++
		}
	}
	return n
}
