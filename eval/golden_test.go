package eval_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// golden is the JSON scripts/gen_eval_golden.py writes from pytrec_eval's output
// and MTEB's MRR formula.
type golden struct {
	NumQueries int                           `json:"num_queries"`
	Mean       map[string]float64            `json:"mean"`
	PerQuery   map[string]map[string]float64 `json:"per_query"`
}

func loadGolden(tb testing.TB, name string) (eval.Qrels, eval.Run, golden) {
	tb.Helper()
	base := filepath.Join("testdata", "golden", name)
	rows, err := corpus.ReadQrels(base+".qrels", corpus.Options{Format: corpus.FormatTSV})
	if err != nil {
		tb.Fatal(err)
	}
	q := eval.Qrels(corpus.Judgements(rows))
	r, err := eval.ReadRunFile(base + ".run")
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(base + ".json")
	if err != nil {
		tb.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatal(err)
	}
	return q, r, g
}

func TestEvaluateMatchesPytrecEval(t *testing.T) {
	const tol = 1e-9
	metrics := append(eval.DefaultMetrics(), "recip_rank")
	for _, name := range []string{"ties", "neartie", "missing", "graded", "random"} {
		t.Run(name, func(t *testing.T) {
			q, r, want := loadGolden(t, name)
			got, err := eval.Evaluate(q, r, metrics...)
			if err != nil {
				t.Fatal(err)
			}
			if got.NumQueries != want.NumQueries || len(got.PerQuery) != len(want.PerQuery) {
				t.Fatalf("scored %d queries, pytrec_eval %d", got.NumQueries, want.NumQueries)
			}
			for qid, wv := range want.PerQuery {
				gv, ok := got.PerQuery[qid]
				if !ok {
					t.Errorf("query %s: not scored", qid)
					continue
				}
				for _, m := range metrics {
					w, ok := wv[m]
					if !ok {
						t.Fatalf("golden file lacks %s", m)
					}
					if math.Abs(gv[m]-w) > tol {
						t.Errorf("query %s %s = %.17g, pytrec_eval %.17g", qid, m, gv[m], w)
					}
				}
			}
			for _, m := range metrics {
				if math.Abs(got.Mean[m]-want.Mean[m]) > tol {
					t.Errorf("mean %s = %.17g, want %.17g", m, got.Mean[m], want.Mean[m])
				}
			}
		})
	}
}

func TestEvaluateListsUnscoredAndUnjudged(t *testing.T) {
	q, r, _ := loadGolden(t, "missing")
	got, err := eval.Evaluate(q, r, "P_1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Unscored, []string{"q3"}) || !slices.Equal(got.Unjudged, []string{"q9"}) {
		t.Errorf("unscored %v, unjudged %v; want [q3], [q9]", got.Unscored, got.Unjudged)
	}
}
