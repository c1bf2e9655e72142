package fuse_test

import (
	"errors"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// kindsGolden is written by scripts/gen_fuse_kinds_golden.py.
type kindsGolden struct {
	goldenWindows
	Kinds []struct {
		Name     string        `json:"name"`
		Windows  []int         `json:"windows"`
		Kind     []int         `json:"kind"`
		NK       int           `json:"nk"`
		Features [][][]float64 `json:"features"`
		Weights  []struct {
			Feature int       `json:"feature"`
			T       float64   `json:"t"`
			Weights []float64 `json:"weights"`
		} `json:"weights"`
	} `json:"kinds"`
	Consensus []struct {
		Windows []int     `json:"windows"`
		Gamma   float64   `json:"gamma"`
		Weights []float64 `json:"weights"`
	} `json:"consensus"`
}

func loadKindsGolden(t *testing.T) kindsGolden {
	t.Helper()
	var g kindsGolden
	readGolden(t, "golden_kinds.json", &g)
	if len(g.Kinds) == 0 || len(g.Consensus) == 0 {
		t.Fatal("golden file without cases")
	}
	return g
}

// TestKindFeaturesMatchReference checks every kind feature and the kind
// weights made from them against the NumPy reference: two and three kinds,
// kinds of uneven size, one kind only, a kind with no hit for some queries,
// one window per kind.
func TestKindFeaturesMatchReference(t *testing.T) {
	g := loadKindsGolden(t)
	for _, c := range g.Kinds {
		t.Run(c.Name, func(t *testing.T) {
			got, err := fuse.KindFeatures(g.hits(c.Windows...), c.Kind, c.NK)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != g.NQ*c.NK*fuse.NumKindFeatures {
				t.Fatalf("%d features, want %d", len(got), g.NQ*c.NK*fuse.NumKindFeatures)
			}
			for q := range g.NQ {
				for k := range c.NK {
					for f := range fuse.NumKindFeatures {
						v, want := got[(q*c.NK+k)*fuse.NumKindFeatures+f], c.Features[q][k][f]
						if !closeTo(v, want) {
							t.Fatalf("query %d kind %d %s: %.17g, want %.17g", q, k, fuse.KindFeatureName(f), v, want)
						}
					}
				}
			}
			// One feature alone: the reference's value, every other 0.
			for only := range fuse.NumKindFeatures {
				one, err := fuse.KindFeatures(g.hits(c.Windows...), c.Kind, c.NK, only)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range one {
					want, f := 0.0, i%fuse.NumKindFeatures
					if f == only {
						want = c.Features[i/fuse.NumKindFeatures/c.NK][i/fuse.NumKindFeatures%c.NK][f]
					}
					if !closeTo(v, want) {
						t.Fatalf("%s alone: value %d (%s) %.17g, want %.17g", fuse.KindFeatureName(only), i, fuse.KindFeatureName(f), v, want)
					}
				}
			}
			for _, w := range c.Weights {
				kw, err := fuse.KindWeights(got, c.NK, w.Feature, w.T)
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range kw {
					if !closeTo(v, w.Weights[i]) {
						t.Fatalf("%s at %g: weight %d %.17g, want %.17g", fuse.KindFeatureName(w.Feature), w.T, i, v, w.Weights[i])
					}
				}
			}
		})
	}
}

// TestConsensusWeightsMatchReference checks the batch consensus weights
// against the NumPy reference, with a window that has no hits for some
// queries and with one window alone.
func TestConsensusWeightsMatchReference(t *testing.T) {
	g := loadKindsGolden(t)
	for _, c := range g.Consensus {
		got, err := fuse.ConsensusWeights(g.hits(c.Windows...), g.NDocs, c.Gamma)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.Weights) {
			t.Fatalf("windows %v: %d weights, want %d", c.Windows, len(got), len(c.Weights))
		}
		for i, v := range got {
			if !closeTo(v, c.Weights[i]) {
				t.Fatalf("windows %v gamma %g: weight %d %.17g, want %.17g", c.Windows, c.Gamma, i, v, c.Weights[i])
			}
		}
	}
}

// TestKindFeaturesRejectShapes checks that kinds that do not describe the
// windows are refused.
func TestKindFeaturesRejectShapes(t *testing.T) {
	g := loadKindsGolden(t)
	ws := g.hits(0, 1)
	for _, c := range []struct {
		kind []int
		nk   int
	}{{[]int{0}, 1}, {[]int{0, 2}, 2}, {[]int{0, 0}, 2}, {[]int{0, -1}, 2}, {[]int{0, 0}, 0}} {
		if _, err := fuse.KindFeatures(ws, c.kind, c.nk); err == nil {
			t.Errorf("kinds %v of %d: no error", c.kind, c.nk)
		}
	}
	for _, only := range []int{-1, fuse.NumKindFeatures} {
		if _, err := fuse.KindFeatures(ws, []int{0, 1}, 2, only); !errors.Is(err, fuse.ErrOptions) {
			t.Errorf("kind feature %d alone: %v", only, err)
		}
	}
	if _, err := fuse.KindWeights(make([]float64, 7), 2, 0, 1); err == nil {
		t.Error("7 kind features for 2 kinds: no error")
	}
	if _, err := fuse.ConsensusWeights(ws, g.NDocs, 0); err == nil {
		t.Error("consensus power 0: no error")
	}
}
