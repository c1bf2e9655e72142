package fuse_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// Two windows, one query, five documents. Values below are worked by hand.
//
//	window 0: doc 3 (0.9), doc 1 (0.8), doc 3 (0.7)
//	window 1: doc 1 (0.95), doc 4 (0.6), -1
var handWindows = []fuse.Hits{
	{K: 3, Docs: []int32{3, 1, 3}, Scores: []float32{0.9, 0.8, 0.7}},
	{K: 3, Docs: []int32{1, 4, -1}, Scores: []float32{0.95, 0.6, 0}},
}

func TestFuseByHand(t *testing.T) {
	tests := []struct {
		name   string
		fuse   func() (*fuse.Ranking, error)
		docs   []int32
		scores []float64
	}{
		// c=1, base 0: doc 1 = 1/2 + 1/1 = 1.5; doc 3 = 1/1 + 1/3 = 4/3; doc 4 = 1/2.
		{"rrf default", func() (*fuse.Ranking, error) { return fuse.RRF(handWindows, 5, fuse.Options{}) },
			[]int32{1, 3, 4}, []float64{1.5, 4.0 / 3, 0.5}},
		// c=60, base 1: doc 1 = 1/62 + 1/61; doc 3 = 1/61 + 1/63; doc 4 = 1/62.
		{"rrf classic", func() (*fuse.Ranking, error) {
			return fuse.RRF(handWindows, 5, fuse.Options{C: 60, RankBase: 1})
		}, []int32{1, 3, 4}, []float64{1.0/62 + 1.0/61, 1.0/61 + 1.0/63, 1.0 / 62}},
		// K=2 keeps the best two.
		{"rrf k2", func() (*fuse.Ranking, error) { return fuse.RRF(handWindows, 5, fuse.Options{K: 2}) },
			[]int32{1, 3}, []float64{1.5, 4.0 / 3}},
		{"maxp", func() (*fuse.Ranking, error) { return fuse.MaxP(handWindows, 5, fuse.Options{}) },
			[]int32{1, 3, 4}, []float64{float64(float32(0.95)), float64(float32(0.9)), float64(float32(0.6))}},
		{"single window 0", func() (*fuse.Ranking, error) { return fuse.Single(handWindows[0], 5, fuse.Options{}) },
			[]int32{3, 1}, []float64{float64(float32(0.9)), float64(float32(0.8))}},
		// Equal RRF scores: the lower document index ranks first.
		{"tie", func() (*fuse.Ranking, error) {
			return fuse.RRF([]fuse.Hits{{K: 1, Docs: []int32{2}, Scores: []float32{0}}, {K: 1, Docs: []int32{0}, Scores: []float32{0}}}, 3, fuse.Options{})
		}, []int32{0, 2}, []float64{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.fuse()
			if err != nil {
				t.Fatal(err)
			}
			docs, scores := r.Query(0)
			if !slices.Equal(docs, tt.docs) {
				t.Fatalf("docs %v, want %v", docs, tt.docs)
			}
			for i := range scores {
				if math.Abs(scores[i]-tt.scores[i]) > 1e-15 {
					t.Errorf("score %d = %.17g, want %.17g", i, scores[i], tt.scores[i])
				}
			}
		})
	}
}

func TestFuseEvidenceByHand(t *testing.T) {
	r, err := fuse.RRF(handWindows, 5, fuse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Doc 3 (rank 1) got votes from window 0 positions 0 and 2.
	want := []fuse.Evidence{{Window: 0, Pos: 0, Rank: 0, Score: 0.9}, {Window: 0, Pos: 2, Rank: 2, Score: 0.7}}
	if got := r.EvidenceOf(0, 1); !slices.Equal(got, want) {
		t.Errorf("RRF evidence of doc 3: %+v, want %+v", got, want)
	}
	m, err := fuse.MaxP(handWindows, 5, fuse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = []fuse.Evidence{{Window: 1, Pos: 0, Rank: 0, Score: 0.95}}
	if got := m.EvidenceOf(0, 0); !slices.Equal(got, want) {
		t.Errorf("MaxP evidence of doc 1: %+v, want %+v", got, want)
	}
}

func TestFuseErrors(t *testing.T) {
	nan := float32(math.NaN())
	tests := []struct {
		name    string
		windows []fuse.Hits
		ndocs   int
		opt     fuse.Options
		maxp    bool
		err     error
		msg     string
	}{
		{"no windows", nil, 5, fuse.Options{}, false, fuse.ErrShape, "no windows"},
		{"ragged", []fuse.Hits{{K: 2, Docs: []int32{1, 2, 3}, Scores: make([]float32, 3)}}, 5, fuse.Options{}, false, fuse.ErrShape, "window 0"},
		{"scores short", []fuse.Hits{{K: 1, Docs: []int32{1}}}, 5, fuse.Options{}, true, fuse.ErrShape, "1 documents, 0 scores"},
		{"query counts differ", []fuse.Hits{{K: 1, Docs: []int32{1}, Scores: []float32{0}}, {K: 1, Docs: []int32{1, 2}, Scores: []float32{0, 0}}}, 5, fuse.Options{}, false, fuse.ErrShape, "window 1 has 2 queries, window 0 has 1"},
		{"doc too large", []fuse.Hits{{K: 2, Docs: []int32{1, 5}, Scores: make([]float32, 2)}}, 5, fuse.Options{}, false, fuse.ErrDocRange, "window 0, query 0, position 1: document 5"},
		{"doc negative", []fuse.Hits{{K: 1, Docs: []int32{-2}, Scores: make([]float32, 1)}}, 5, fuse.Options{}, false, fuse.ErrDocRange, "document -2"},
		{"nan score", []fuse.Hits{{K: 1, Docs: []int32{0}, Scores: []float32{nan}}}, 5, fuse.Options{}, true, fuse.ErrScore, "score NaN"},
		{"rank weight infinite", []fuse.Hits{{K: 1, Docs: []int32{0}, Scores: make([]float32, 1)}}, 5, fuse.Options{C: -1}, false, fuse.ErrOptions, "c -1 and base 0 must not be negative"},
		{"negative k", []fuse.Hits{{K: 1, Docs: []int32{0}, Scores: make([]float32, 1)}}, 5, fuse.Options{K: -1}, false, fuse.ErrOptions, "K -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.maxp {
				_, err = fuse.MaxP(tt.windows, tt.ndocs, tt.opt)
			} else {
				_, err = fuse.RRF(tt.windows, tt.ndocs, tt.opt)
			}
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want %v containing %q", err, tt.err, tt.msg)
			}
		})
	}
}

func TestFuseEmptyBatch(t *testing.T) {
	r, err := fuse.RRF([]fuse.Hits{{K: 4}}, 0, fuse.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.NQ != 0 || len(r.Docs) != 0 || len(r.EvStart) != 1 {
		t.Errorf("empty batch: %+v", r)
	}
}

func TestFuseRulesByHand(t *testing.T) {
	f32 := func(x float32) float64 { return float64(x) }
	empty := fuse.Hits{K: 2, Docs: []int32{-1, -1}, Scores: []float32{0, 0}}
	tests := []struct {
		name    string
		m       fuse.Method
		windows []fuse.Hits
		opt     fuse.Options
		docs    []int32
		scores  []float64
	}{
		// Cap 1: doc 3's second chunk (rank 2) does not vote. doc 1 = 1/2 + 1/1.
		{"rrf cap 1", fuse.MethodRRF, handWindows, fuse.Options{Cap: 1}, []int32{1, 3, 4}, []float64{1.5, 1, 0.5}},
		// doc 3 = 2/1 + 2/3; doc 1 = 2/2 + 0.5/1; doc 4 = 0.5/2.
		{"rrf weights", fuse.MethodRRF, handWindows, fuse.Options{Weights: []float64{2, 0.5}}, []int32{3, 1, 4}, []float64{2 + 2.0/3, 1.5, 0.25}},
		// Window 1 weighs 0 for the query: it is left out, doc 4 with it.
		{"rrf query weight 0", fuse.MethodRRF, handWindows, fuse.Options{QueryWeights: []float64{1, 0}}, []int32{3, 1}, []float64{1 + 1.0/3, 0.5}},
		// Document lists: window 0 is 3, 1; window 1 is 1, 4. c=60, base 1.
		{"docrrf classic", fuse.MethodDocRRF, handWindows, fuse.Options{C: 60, RankBase: 1}, []int32{1, 3, 4}, []float64{1.0/62 + 1.0/61, 1.0 / 61, 1.0 / 62}},
		// Raw: a document a window missed gets the window's lowest score.
		// doc 1 = 0.8 + 0.95; doc 3 = 0.9 + 0.6; doc 4 = 0.8 + 0.6.
		{"combsum none", fuse.MethodCombSUM, handWindows, fuse.Options{}, []int32{1, 3, 4},
			[]float64{f32(0.8) + f32(0.95), f32(0.9) + f32(0.6), f32(0.8) + f32(0.6)}},
		// Min-max: window 0 gives doc 3 1, doc 1 0; window 1 gives doc 1 1,
		// doc 4 0; misses get 0. doc 1 and doc 3 tie at 1: lower index first.
		{"combsum minmax", fuse.MethodCombSUM, handWindows, fuse.Options{Norm: fuse.NormMinMax}, []int32{1, 3, 4}, []float64{1, 1, 0}},
		// CombMNZ: doc 1 was retrieved by both windows.
		{"combmnz minmax", fuse.MethodCombMNZ, handWindows, fuse.Options{Norm: fuse.NormMinMax}, []int32{1, 3, 4}, []float64{2, 1, 0}},
		// z: +1 and -1 in each window; misses get -1.
		{"combsum zscore", fuse.MethodCombSUM, handWindows, fuse.Options{Norm: fuse.NormZScore}, []int32{1, 3, 4}, []float64{0, 0, -2}},
		// A window with no hits adds no floor.
		{"combsum empty window", fuse.MethodCombSUM, []fuse.Hits{handWindows[0], empty}, fuse.Options{Norm: fuse.NormMinMax}, []int32{3, 1}, []float64{1, 0}},
		// One document per window: min-max gives it 1, the other window's miss 0.
		{"combsum minmax flat", fuse.MethodCombSUM, []fuse.Hits{{K: 1, Docs: []int32{2}, Scores: []float32{0.5}}, {K: 1, Docs: []int32{0}, Scores: []float32{0.1}}},
			fuse.Options{Norm: fuse.NormMinMax}, []int32{0, 2}, []float64{1, 1}},
		{"maxp via Fuse", fuse.MethodMaxP, handWindows, fuse.Options{}, []int32{1, 3, 4}, []float64{f32(0.95), f32(0.9), f32(0.6)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := fuse.Fuse(tt.m, tt.windows, 5, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			docs, scores := r.Query(0)
			if !slices.Equal(docs, tt.docs) {
				t.Fatalf("docs %v, want %v", docs, tt.docs)
			}
			for i := range scores {
				if math.Abs(scores[i]-tt.scores[i]) > 1e-15 {
					t.Errorf("score %d = %.17g, want %.17g", i, scores[i], tt.scores[i])
				}
			}
		})
	}
}

func TestFuseRulesEvidenceByHand(t *testing.T) {
	tests := []struct {
		name string
		m    fuse.Method
		opt  fuse.Options
		rank int
		want []fuse.Evidence
	}{
		// Doc 3 at rank 1: with Cap 1 only its first chunk of window 0 voted.
		{"rrf cap 1", fuse.MethodRRF, fuse.Options{Cap: 1}, 1, []fuse.Evidence{{Window: 0, Pos: 0, Rank: 0, Score: 0.9}}},
		// Doc 1 at rank 0: its first hit in each window.
		{"docrrf", fuse.MethodDocRRF, fuse.Options{}, 0, []fuse.Evidence{{Window: 0, Pos: 1, Rank: 1, Score: 0.8}, {Window: 1, Pos: 0, Rank: 0, Score: 0.95}}},
		{"combmnz", fuse.MethodCombMNZ, fuse.Options{Norm: fuse.NormZScore}, 0, []fuse.Evidence{{Window: 0, Pos: 1, Rank: 1, Score: 0.8}, {Window: 1, Pos: 0, Rank: 0, Score: 0.95}}},
		// Doc 3 at rank 1: one entry although it has two chunks in window 0.
		{"combsum", fuse.MethodCombSUM, fuse.Options{}, 1, []fuse.Evidence{{Window: 0, Pos: 0, Rank: 0, Score: 0.9}}},
		// Window 0 weighs 0: doc 1's evidence is window 1's hit only.
		{"docrrf weight 0", fuse.MethodDocRRF, fuse.Options{Weights: []float64{0, 1}}, 0, []fuse.Evidence{{Window: 1, Pos: 0, Rank: 0, Score: 0.95}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := fuse.Fuse(tt.m, handWindows, 5, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.EvidenceOf(0, tt.rank); !slices.Equal(got, tt.want) {
				t.Errorf("evidence of rank %d: %+v, want %+v", tt.rank, got, tt.want)
			}
		})
	}
}

func TestFuseOptionErrors(t *testing.T) {
	one := []fuse.Hits{{K: 1, Docs: []int32{0}, Scores: []float32{0.5}}}
	two := []fuse.Hits{one[0], one[0]}
	inf := float32(math.Inf(1))
	tests := []struct {
		name    string
		m       fuse.Method
		windows []fuse.Hits
		opt     fuse.Options
		err     error
		msg     string
	}{
		{"weights length", fuse.MethodRRF, two, fuse.Options{Weights: []float64{1}}, fuse.ErrOptions, "1 weights for 2 windows"},
		{"weight negative", fuse.MethodCombSUM, two, fuse.Options{Weights: []float64{1, -1}}, fuse.ErrOptions, "weight of window 1 is -1"},
		{"weight NaN", fuse.MethodDocRRF, two, fuse.Options{Weights: []float64{math.NaN(), 1}}, fuse.ErrOptions, "weight of window 0 is NaN"},
		{"weight infinite", fuse.MethodRRF, two, fuse.Options{Weights: []float64{1, math.Inf(1)}}, fuse.ErrOptions, "weight of window 1 is +Inf"},
		{"weights with maxp", fuse.MethodMaxP, two, fuse.Options{Weights: []float64{1, 1}}, fuse.ErrOptions, "maxp takes no window weights"},
		{"query weights with maxp", fuse.MethodMaxP, two, fuse.Options{QueryWeights: []float64{1, 1}}, fuse.ErrOptions, "maxp takes no window weights"},
		{"query weights length", fuse.MethodRRF, two, fuse.Options{QueryWeights: []float64{1, 1, 1}}, fuse.ErrShape, "3 query weights for 1 queries x 2 windows"},
		{"query weight negative", fuse.MethodCombMNZ, two, fuse.Options{QueryWeights: []float64{1, -0.5}}, fuse.ErrOptions, "query weight of query 0, window 1 is -0.5"},
		{"query weight overflow", fuse.MethodRRF, two, fuse.Options{Weights: []float64{1e200, 1}, QueryWeights: []float64{1e200, 1}}, fuse.ErrOptions, "query 0, window 0: weight 1e+200 times query weight 1e+200 overflows"},
		{"cap negative", fuse.MethodRRF, one, fuse.Options{Cap: -1}, fuse.ErrOptions, "cap -1"},
		{"unknown method", fuse.Method(9), one, fuse.Options{}, fuse.ErrOptions, "unknown method 9"},
		{"unknown norm", fuse.MethodCombSUM, one, fuse.Options{Norm: fuse.Norm(-1)}, fuse.ErrOptions, "unknown normalisation -1"},
		{"docrrf rank weight infinite", fuse.MethodDocRRF, one, fuse.Options{C: -1}, fuse.ErrOptions, "the docrrf term is 1/(rank+base+c)"},
		{"combsum score infinite", fuse.MethodCombSUM, []fuse.Hits{{K: 2, Docs: []int32{0, 1}, Scores: []float32{inf, 0}}}, fuse.Options{}, fuse.ErrScore, "window 0, query 0, position 0: document 0 has score +Inf"},
		{"combmnz score NaN", fuse.MethodCombMNZ, []fuse.Hits{{K: 1, Docs: []int32{3}, Scores: []float32{float32(math.NaN())}}}, fuse.Options{}, fuse.ErrScore, "document 3 has score NaN"},
		{"docrrf doc range", fuse.MethodDocRRF, []fuse.Hits{{K: 1, Docs: []int32{5}, Scores: []float32{0}}}, fuse.Options{}, fuse.ErrDocRange, "document 5 (want -1 or [0, 5))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fuse.Fuse(tt.m, tt.windows, 5, tt.opt)
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v, want %v containing %q", err, tt.err, tt.msg)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "fuse: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// Only the rules that sum scores refuse infinite ones.
func TestFuseInfiniteScores(t *testing.T) {
	w := []fuse.Hits{{K: 1, Docs: []int32{0}, Scores: []float32{float32(math.Inf(1))}}}
	for _, m := range []fuse.Method{fuse.MethodRRF, fuse.MethodDocRRF, fuse.MethodMaxP} {
		if _, err := fuse.Fuse(m, w, 1, fuse.Options{}); err != nil {
			t.Errorf("%v: %v", m, err)
		}
	}
}

func TestMethodAndNormNames(t *testing.T) {
	for _, m := range []fuse.Method{fuse.MethodRRF, fuse.MethodDocRRF, fuse.MethodCombSUM, fuse.MethodCombMNZ, fuse.MethodMaxP} {
		got, err := fuse.ParseMethod(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMethod(%q) = %v, %v", m.String(), got, err)
		}
	}
	for _, n := range []fuse.Norm{fuse.NormNone, fuse.NormMinMax, fuse.NormZScore} {
		got, err := fuse.ParseNorm(n.String())
		if err != nil || got != n {
			t.Errorf("ParseNorm(%q) = %v, %v", n.String(), got, err)
		}
	}
	if s := fuse.Method(7).String(); s != "Method(7)" {
		t.Errorf("Method(7).String() = %q", s)
	}
	if s := fuse.Norm(3).String(); s != "Norm(3)" {
		t.Errorf("Norm(3).String() = %q", s)
	}
	if _, err := fuse.ParseMethod("bm25"); !errors.Is(err, fuse.ErrOptions) {
		t.Errorf("ParseMethod(bm25): %v", err)
	}
	if _, err := fuse.ParseNorm("l2"); !errors.Is(err, fuse.ErrOptions) {
		t.Errorf("ParseNorm(l2): %v", err)
	}
}
