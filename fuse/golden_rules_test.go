package fuse_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// rulesGolden is written by scripts/gen_fuse_rules_golden.py.
type rulesGolden struct {
	NumPy string `json:"numpy"`
	goldenWindows
	Cases []rulesCase `json:"cases"`
}

type rulesCase struct {
	Name         string    `json:"name"`
	Method       string    `json:"method"`
	K            int       `json:"k"`
	C            float64   `json:"c"`
	RankBase     int       `json:"rank_base"`
	Cap          int       `json:"cap"`
	Norm         string    `json:"norm"`
	Weights      []float64 `json:"weights"`
	QueryWeights []float64 `json:"query_weights"`
	Linear       []float64 `json:"linear"`
	Windows      []int     `json:"windows"`
	Queries      [][]struct {
		Doc      int32        `json:"doc"`
		Score    float64      `json:"score"`
		Evidence [][4]float64 `json:"evidence"`
	} `json:"queries"`
}

func loadRulesGolden(tb testing.TB) rulesGolden {
	var g rulesGolden
	readGolden(tb, "golden_rules.json", &g)
	return g
}

// TestFuseRulesMatchReference checks every rule against the rankings the
// NumPy reference computed: documents and evidence exactly, scores to a
// relative 1e-12.
func TestFuseRulesMatchReference(t *testing.T) {
	g := loadRulesGolden(t)
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range g.Cases {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.Name, workers), func(t *testing.T) {
				m, err := fuse.ParseMethod(c.Method)
				if err != nil {
					t.Fatal(err)
				}
				norm, err := fuse.ParseNorm(c.Norm)
				if err != nil {
					t.Fatal(err)
				}
				ws := g.hits(c.Windows...)
				opt := fuse.Options{K: c.K, C: c.C, RankBase: c.RankBase, Cap: c.Cap, Norm: norm,
					Weights: c.Weights, QueryWeights: c.QueryWeights, Linear: c.Linear, Workers: workers}
				r, err := fuse.Fuse(m, ws, g.NDocs, opt)
				if err != nil {
					t.Fatal(err)
				}
				if r.NQ != g.NQ || len(c.Queries) != g.NQ {
					t.Fatalf("NQ %d, golden has %d queries, want %d", r.NQ, len(c.Queries), g.NQ)
				}
				for q := range c.Queries {
					checkRulesQuery(t, r, q, c)
				}
			})
		}
	}
}

func checkRulesQuery(t *testing.T, r *fuse.Ranking, q int, c rulesCase) {
	t.Helper()
	want := c.Queries[q]
	docs, scores := r.Query(q)
	if len(docs) != len(want) {
		t.Fatalf("query %d: %d documents, want %d", q, len(docs), len(want))
	}
	for i, wd := range want {
		if docs[i] != wd.Doc || math.Abs(scores[i]-wd.Score) > 1e-12*math.Abs(wd.Score) {
			t.Fatalf("query %d rank %d: doc %d score %.17g, want doc %d score %.17g", q, i, docs[i], scores[i], wd.Doc, wd.Score)
		}
		ev := r.EvidenceOf(q, i)
		if len(ev) != len(wd.Evidence) {
			t.Fatalf("query %d rank %d: %d evidence entries %+v, want %v", q, i, len(ev), ev, wd.Evidence)
		}
		for j, e := range ev {
			we := wd.Evidence[j]
			if float64(e.Window) != we[0] || float64(e.Pos) != we[1] || float64(e.Rank) != we[2] || float64(e.Score) != we[3] {
				t.Fatalf("query %d rank %d evidence %d: %+v, want %v", q, i, j, e, we)
			}
		}
	}
	for i := len(docs); i < r.K; i++ {
		if len(r.EvidenceOf(q, i)) != 0 {
			t.Fatalf("query %d: empty slot %d has evidence", q, i)
		}
	}
}

// featuresGolden is the features part of golden_rules.json.
type featuresGolden struct {
	goldenWindows
	Features map[string][][][]float64 `json:"features"`
	Adaptive []struct {
		Feature int       `json:"feature"`
		T       float64   `json:"t"`
		Weights []float64 `json:"weights"`
	} `json:"adaptive"`
}

// TestFeaturesMatchReference checks the query features and the adaptive
// weights against the NumPy reference.
func TestFeaturesMatchReference(t *testing.T) {
	var g featuresGolden
	readGolden(t, "golden_rules.json", &g)
	sets := map[string][]fuse.Hits{"all3": g.hits(0, 1, 2), "sparse": g.hits(0, 3)}
	got := map[string][]float64{}
	for name, ws := range sets {
		f, err := fuse.Features(ws)
		if err != nil {
			t.Fatal(err)
		}
		got[name] = f
		want := g.Features[name]
		for q := range want {
			for w := range want[q] {
				for k, v := range want[q][w] {
					if g := f[(q*len(ws)+w)*fuse.NumFeatures+k]; !closeTo(g, v) {
						t.Fatalf("%s query %d window %d %s: %v, want %v", name, q, w, fuse.FeatureName(k), g, v)
					}
				}
			}
		}
	}
	for _, a := range g.Adaptive {
		w, err := fuse.AdaptiveWeights(got["all3"], 3, a.Feature, a.T)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range a.Weights {
			if !closeTo(w[i], v) {
				t.Fatalf("%s t=%v: weight %d = %v, want %v", fuse.FeatureName(a.Feature), a.T, i, w[i], v)
			}
		}
	}
}
