package fuse_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// benchWindows makes nq queries x len(ks) windows of random hits over ndocs
// documents, scores descending, with a fixed seed.
func benchWindows(tb testing.TB, nq, ndocs int, ks []int) []fuse.Hits {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	ws := make([]fuse.Hits, len(ks))
	for w, k := range ks {
		h := fuse.Hits{K: k, Docs: make([]int32, nq*k), Scores: make([]float32, nq*k)}
		for q := range nq {
			s := float32(1)
			for j := range k {
				h.Docs[q*k+j] = int32(rng.IntN(ndocs))
				s -= rng.Float32() / float32(k)
				h.Scores[q*k+j] = s
			}
		}
		ws[w] = h
	}
	return ws
}

// BenchmarkFuse fuses the SciFact shape: 10,000 queries x 3 windows x 100
// hits over 5,183 documents.
func BenchmarkFuse(b *testing.B) {
	const nq, ndocs = 10000, 5183
	ws := benchWindows(b, nq, ndocs, []int{100, 100, 100})
	fusers := []struct {
		name string
		f    func([]fuse.Hits, int, fuse.Options) (*fuse.Ranking, error)
	}{
		{"rrf", fuse.RRF},
		{"maxp", fuse.MaxP},
	}
	for _, fz := range fusers {
		for _, k := range []int{10, 100} {
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/k=%d/workers=%d", fz.name, k, workers), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(nq * 3 * 100 * 8)) // input: doc int32 + score float32 per hit
					for b.Loop() {
						if _, err := fz.f(ws, ndocs, fuse.Options{K: k, Workers: workers}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nq), "ns/query")
				})
			}
		}
	}
}
