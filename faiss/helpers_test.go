package faiss_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// randVecs returns n row-major random vectors of dimension d, each entry
// uniform in [-1, 1), from a fixed seed.
func randVecs(tb testing.TB, seed uint64, n, d int) []float32 {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	x := make([]float32, n*d)
	for i := range x {
		x[i] = 2*r.Float32() - 1
	}
	return x
}

// score is the exact similarity of vectors a and b under m, in float64:
// the dot product for InnerProduct, the squared distance for L2.
func score(a, b []float32, m faiss.Metric) float64 {
	var s float64
	for i := range a {
		if m == faiss.L2 {
			d := float64(a[i]) - float64(b[i])
			s += d * d
		} else {
			s += float64(a[i]) * float64(b[i])
		}
	}
	return s
}

// bruteForce is an independent exhaustive search: for each query, the
// scores of the k best database vectors under m, best first.
func bruteForce(xb, xq []float32, d, k int, m faiss.Metric) [][]float64 {
	nb, nq := len(xb)/d, len(xq)/d
	out := make([][]float64, nq)
	for i := range nq {
		q := xq[i*d : (i+1)*d]
		s := make([]float64, nb)
		for j := range nb {
			s[j] = score(q, xb[j*d:(j+1)*d], m)
		}
		if m == faiss.L2 {
			sort.Float64s(s)
		} else {
			sort.Sort(sort.Reverse(sort.Float64Slice(s)))
		}
		out[i] = s[:min(k, nb)]
	}
	return out
}

// checkExact checks a FAISS result against the brute force: at every rank
// the returned distance equals the true k-th best score within tol, and the
// returned label's own exact score does too. Labels are not compared
// directly, so vectors tied within tol may come in either order.
func checkExact(tb testing.TB, xb, xq []float32, d, k int, m faiss.Metric, dist []float32, labels []int64, tol float64) {
	tb.Helper()
	want := bruteForce(xb, xq, d, k, m)
	for i := range want {
		seen := map[int64]bool{}
		for r := range k {
			got, lab := dist[i*k+r], labels[i*k+r]
			if r >= len(want[i]) {
				if lab != -1 {
					tb.Fatalf("query %d rank %d: label %d, want -1 (index holds %d)", i, r, lab, len(want[i]))
				}
				continue
			}
			if lab < 0 || int(lab) >= len(xb)/d || seen[lab] {
				tb.Fatalf("query %d rank %d: bad or repeated label %d", i, r, lab)
			}
			seen[lab] = true
			w := want[i][r]
			if math.Abs(float64(got)-w) > tol*(1+math.Abs(w)) {
				tb.Fatalf("query %d rank %d: distance %g, brute force %g", i, r, got, w)
			}
			own := score(xq[i*d:(i+1)*d], xb[int(lab)*d:(int(lab)+1)*d], m)
			if math.Abs(own-w) > tol*(1+math.Abs(w)) {
				tb.Fatalf("query %d rank %d: label %d scores %g, brute force rank score %g", i, r, lab, own, w)
			}
		}
	}
}

// newIndex builds, trains (on xb) and fills an index, closing it at the end
// of the test.
func newIndex(tb testing.TB, d int, factory string, m faiss.Metric, xb []float32) *faiss.Index {
	tb.Helper()
	ix, err := faiss.New(d, factory, m)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	if !ix.IsTrained() {
		if err := ix.Train(xb); err != nil {
			tb.Fatal(err)
		}
	}
	if err := ix.Add(xb); err != nil {
		tb.Fatal(err)
	}
	return ix
}
