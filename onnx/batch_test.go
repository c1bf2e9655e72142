package onnx

import (
	"math"
	"testing"
)

func sqrt(x float64) float64 { return math.Sqrt(x) }

func TestPlanBatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lens     []int
		budget   int
		maxBatch int
		want     []batch
		order    []int
	}{
		{"empty", nil, 100, 10, nil, []int{}},
		{"one", []int{7}, 100, 10, []batch{{0, 1, 7}}, []int{0}},
		{"sorted longest first, stable", []int{3, 9, 3, 5}, 100, 10, []batch{{0, 1, 9}, {1, 2, 5}, {2, 4, 3}}, []int{1, 3, 0, 2}},
		{"cut by budget", []int{10, 10, 10, 5, 5, 5, 5}, 20, 10, []batch{{0, 2, 10}, {2, 3, 10}, {3, 7, 5}}, []int{0, 1, 2, 3, 4, 5, 6}},
		{"cut by max batch", []int{2, 2, 2, 2, 2}, 100, 2, []batch{{0, 2, 2}, {2, 4, 2}, {4, 5, 2}}, []int{0, 1, 2, 3, 4}},
		{"cut by padding", []int{100, 99, 97, 90, 89}, 1000, 10, []batch{{0, 4, 100}, {4, 5, 89}}, []int{0, 1, 2, 3, 4}},
		{"longer than budget alone", []int{50, 4}, 20, 10, []batch{{0, 1, 50}, {1, 2, 4}}, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			order, got := planBatches(tc.lens, tc.budget, tc.maxBatch)
			if len(got) != len(tc.want) {
				t.Fatalf("batches %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("batches %v, want %v", got, tc.want)
				}
			}
			for i := range order {
				if order[i] != tc.order[i] {
					t.Fatalf("order %v, want %v", order, tc.order)
				}
			}
		})
	}
}

// TestPlanBatchesPadding checks on many lengths that every sequence lands in one
// batch, that no batch passes the budget, and that padding stays small.
func TestPlanBatchesPadding(t *testing.T) {
	lens := make([]int, 5000)
	x := uint32(1)
	real := 0
	for i := range lens {
		x = x*1664525 + 1013904223 // fixed LCG: reproducible lengths in [8, 263)
		lens[i] = 8 + int(x>>8)%255
		real += lens[i]
	}
	order, batches := planBatches(lens, 8192, 256)
	seen := make([]bool, len(lens))
	padded := 0
	for _, b := range batches {
		if (b.hi-b.lo)*b.seqLen > 8192 {
			t.Fatalf("batch %v over budget", b)
		}
		for _, i := range order[b.lo:b.hi] {
			if seen[i] || lens[i] > b.seqLen {
				t.Fatalf("sequence %d (len %d) in batch %v", i, lens[i], b)
			}
			seen[i] = true
		}
		padded += (b.hi - b.lo) * b.seqLen
	}
	for i, s := range seen {
		if !s {
			t.Fatalf("sequence %d in no batch", i)
		}
	}
	if frac := float64(padded-real) / float64(real); frac > 0.05 {
		t.Fatalf("padding %.1f%% of real tokens, want <= 5%%", 100*frac)
	}
}

func TestPool(t *testing.T) {
	// Three tokens of 2 dims; the third is padding.
	tokens := []float32{1, 2, 3, 4, 100, 100}
	mask := []int64{1, 1, 0}
	for _, tc := range []struct {
		p    Pooling
		want []float32
	}{
		{PoolMean, []float32{2, 3}},
		{PoolCLS, []float32{1, 2}},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			dst := make([]float32, 2)
			pool(dst, tokens, mask, tc.p)
			if dst[0] != tc.want[0] || dst[1] != tc.want[1] {
				t.Fatalf("pool = %v, want %v", dst, tc.want)
			}
		})
	}
}
