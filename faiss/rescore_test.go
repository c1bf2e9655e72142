package faiss_test

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// rescoreGolden is testdata/rescore.golden.json, written by
// scripts/gen_rescore_golden.py with NumPy: every float32 as its bits.
type rescoreGolden struct {
	Cases []struct {
		D, K         int
		Vectors      []uint32
		Queries      []uint32
		Labels       []int64
		InnerProduct []uint32 `json:"inner_product"`
		L2           []uint32 `json:"l2"`
	}
}

func floats(bits []uint32) []float32 {
	out := make([]float32, len(bits))
	for i, b := range bits {
		out[i] = math.Float32frombits(b)
	}
	return out
}

// TestRescoreGolden checks Rescore's bits against NumPy's float32
// arithmetic in the order it documents, so that every build of the binding
// (FAISS 1.7.3, the wheels' 1.15.0 at any SIMD level, the GPU build) scores a
// pair alike.
func TestRescoreGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/rescore.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g rescoreGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) == 0 {
		t.Fatal("no cases in rescore.golden.json")
	}
	for _, c := range g.Cases {
		for _, m := range []faiss.Metric{faiss.InnerProduct, faiss.L2} {
			want := c.InnerProduct
			if m == faiss.L2 {
				want = c.L2
			}
			ix := newIndex(t, c.D, "Flat", m, floats(c.Vectors))
			got, err := ix.Rescore(floats(c.Queries), c.Labels, c.K)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				if b := math.Float32bits(got[i]); b != w {
					t.Fatalf("d=%d %v pair %d (query %d, label %d): %v (%#x), want %v (%#x)",
						c.D, m, i, i/c.K, c.Labels[i], got[i], b, math.Float32frombits(w), w)
				}
			}
		}
	}
}
