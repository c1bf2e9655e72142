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
		{"rank weight infinite", []fuse.Hits{{K: 1, Docs: []int32{0}, Scores: make([]float32, 1)}}, 5, fuse.Options{C: -1}, false, fuse.ErrOptions, "RankBase + C > 0"},
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
