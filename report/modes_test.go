package report

import (
	"math"
	"strings"
	"testing"

	"github.com/msrag/msrag/eval"
)

// modeRun is an Eval with configuration rrf scoring the queries per.
func modeRun(dataset, embedding string, per map[string]float64) *Eval {
	r := eval.Results{Metrics: []string{"ndcg_cut_10"}, NumQueries: len(per), Mean: map[string]float64{}, PerQuery: map[string]map[string]float64{}}
	for q, v := range per {
		r.PerQuery[q] = map[string]float64{"ndcg_cut_10": v}
		r.Mean["ndcg_cut_10"] += v / float64(len(per))
	}
	return &Eval{Dataset: dataset, Split: "test", Model: Model{Name: "m"}, Queries: len(per), Embedding: embedding,
		Configs: []Config{{Name: "rrf", Kind: "rrf", Results: r}, {Name: "only-here", Results: r}}}
}

func TestCompareModes(t *testing.T) {
	a := modeRun("d", "", map[string]float64{"q1": 0.5, "q2": 0.2, "q3": 1})
	b := modeRun("d", "late", map[string]float64{"q1": 0.6, "q2": 0.2, "q3": 0.5})
	b.Configs = b.Configs[:1]
	m, err := CompareModes([]*Eval{a, b}, []string{"A", "B"}, []string{"a", "b"}, "ndcg_cut_10")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Configs) != 1 || m.Runs[0].Embedding != "independent" || m.Runs[1].Name != "B" {
		t.Fatalf("configurations %+v, runs %+v: want rrf only, the first run independent", m.Configs, m.Runs)
	}
	c := m.Configs[0]
	p := c.Paired[0]
	// B - A per query: +0.1, 0, -0.5.
	if math.Abs(p.Diff-(-0.4/3)) > 1e-12 || p.Wins != 1 || p.Ties != 1 || p.Losses != 1 || p.Queries != 3 {
		t.Errorf("paired %+v, want diff -0.1333, 1/1/1 of 3", p)
	}
	if math.Abs(c.Means[0]-1.7/3) > 1e-12 || math.Abs(c.Means[1]-1.3/3) > 1e-12 {
		t.Errorf("means %v, want 0.5667 and 0.4333", c.Means)
	}
	var md strings.Builder
	if err := WriteModesMarkdown(&md, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| rrf | 56.67 | 43.33 | -13.33 |") {
		t.Errorf("modes.md:\n%s", md.String())
	}
	if _, err := CompareModes([]*Eval{a, modeRun("other", "", nil)}, []string{"A", "B"}, []string{"a", "b"}, "ndcg_cut_10"); err == nil || !strings.Contains(err.Error(), "is not run 1's") {
		t.Errorf("runs of two datasets: %v", err)
	}
}
