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
// hits over 5,183 documents, with each rule.
func BenchmarkFuse(b *testing.B) {
	const nq, ndocs = 10000, 5183
	ws := benchWindows(b, nq, ndocs, []int{100, 100, 100})
	rules := []struct {
		name string
		m    fuse.Method
		opt  fuse.Options
	}{
		{"rrf", fuse.MethodRRF, fuse.Options{}},
		{"rrf-cap2", fuse.MethodRRF, fuse.Options{Cap: 2}},
		{"rrf-weights", fuse.MethodRRF, fuse.Options{Weights: []float64{1, 0.5, 2}}},
		{"docrrf", fuse.MethodDocRRF, fuse.Options{}},
		{"combsum-minmax", fuse.MethodCombSUM, fuse.Options{Norm: fuse.NormMinMax}},
		{"combsum-zscore", fuse.MethodCombSUM, fuse.Options{Norm: fuse.NormZScore}},
		{"combmnz-minmax", fuse.MethodCombMNZ, fuse.Options{Norm: fuse.NormMinMax}},
		{"maxp", fuse.MethodMaxP, fuse.Options{}},
	}
	for _, rule := range rules {
		for _, k := range []int{10, 100} {
			for _, workers := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/k=%d/workers=%d", rule.name, k, workers), func(b *testing.B) {
					opt := rule.opt
					opt.K, opt.Workers = k, workers
					b.ReportAllocs()
					b.SetBytes(int64(nq * 3 * 100 * 8)) // input: doc int32 + score float32 per hit
					for b.Loop() {
						if _, err := fuse.Fuse(rule.m, ws, ndocs, opt); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nq), "ns/query")
				})
			}
		}
	}
}
