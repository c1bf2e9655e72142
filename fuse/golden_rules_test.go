package fuse_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// rulesGolden is written by scripts/gen_fuse_rules_golden.py.
type rulesGolden struct {
	NumPy   string `json:"numpy"`
	NQ      int    `json:"nq"`
	NDocs   int    `json:"ndocs"`
	Windows []struct {
		K      int       `json:"k"`
		Docs   []int32   `json:"docs"`
		Scores []float32 `json:"scores"`
	} `json:"windows"`
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
	tb.Helper()
	data, err := os.ReadFile("testdata/golden_rules.json")
	if err != nil {
		tb.Fatal(err)
	}
	var g rulesGolden
	if err := json.Unmarshal(data, &g); err != nil {
		tb.Fatal(err)
	}
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
				var ws []fuse.Hits
				for _, i := range c.Windows {
					w := g.Windows[i]
					ws = append(ws, fuse.Hits{K: w.K, Docs: w.Docs, Scores: w.Scores})
				}
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
	Windows []struct {
		K      int       `json:"k"`
		Docs   []int32   `json:"docs"`
		Scores []float32 `json:"scores"`
	} `json:"windows"`
	Features map[string][][][]float64 `json:"features"`
	Adaptive []struct {
		Feature int       `json:"feature"`
		T       float64   `json:"t"`
		Weights []float64 `json:"weights"`
	} `json:"adaptive"`
}

func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

// TestFeaturesMatchReference checks the query features and the adaptive
// weights against the NumPy reference.
func TestFeaturesMatchReference(t *testing.T) {
	data, err := os.ReadFile("testdata/golden_rules.json")
	if err != nil {
		t.Fatal(err)
	}
	var g featuresGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	hits := func(idx ...int) []fuse.Hits {
		var ws []fuse.Hits
		for _, i := range idx {
			ws = append(ws, fuse.Hits{K: g.Windows[i].K, Docs: g.Windows[i].Docs, Scores: g.Windows[i].Scores})
		}
		return ws
	}
	sets := map[string][]fuse.Hits{"all3": hits(0, 1, 2), "sparse": hits(0, 3)}
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
