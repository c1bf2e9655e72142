//go:build gpu

package faiss_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msrag/msrag/faiss"
)

// TestGPUFlatAgainstCPU searches one flat inner-product index on the CPU
// (every core) and on GPU 0 and reports both rates; every query's top 10
// must be the CPU's but where two rows are within 1e-4 of each other (the
// GPU's products round otherwise). It runs only with
// MSRAG_GPU_FLAT=N,D,Q (vectors, dimensions, queries; scripts/gpu-check.sh
// gives 1000000,384,10000) and a GPU.
func TestGPUFlatAgainstCPU(t *testing.T) {
	spec := os.Getenv("MSRAG_GPU_FLAT")
	if spec == "" {
		t.Skip("MSRAG_GPU_FLAT=N,D,Q not set")
	}
	var n, d, nq int
	if _, err := fmt.Sscanf(spec, "%d,%d,%d", &n, &d, &nq); err != nil || n < 10 || d < 1 || nq < 1 {
		t.Fatalf("MSRAG_GPU_FLAT=%q: want N,D,Q such as 1000000,384,10000", spec)
	}
	if faiss.NumGPUs() == 0 {
		t.Skip("no CUDA device")
	}
	const k = 10
	xb, xq := unitVecs(n, d, 1), unitVecs(nq, d, 2)
	cpu := newIndex(t, d, "Flat", faiss.InnerProduct, xb)
	t0 := time.Now()
	gpu, err := cpu.ToGPU(0)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	toGPU := time.Since(t0)
	if _, _, err := gpu.Search(xq[:d], k); err != nil { // warm-up
		t.Fatal(err)
	}
	t0 = time.Now()
	gd, gl, err := gpu.Search(xq, k)
	if err != nil {
		t.Fatal(err)
	}
	gs := time.Since(t0).Seconds()
	t0 = time.Now()
	cd, cl, err := cpu.Search(xq, k)
	if err != nil {
		t.Fatal(err)
	}
	cs := time.Since(t0).Seconds()
	same, near := 0, 0
	for q := range nq {
		a, b := cl[q*k:(q+1)*k], gl[q*k:(q+1)*k]
		if slices.Equal(a, b) {
			same++
			continue
		}
		// A difference is allowed only between rows whose scores are within
		// 1e-4: the last CPU score against every GPU row the CPU lacks.
		last := cd[q*k+k-1]
		for j, l := range b {
			if !slices.Contains(a, l) && gd[q*k+j] < last-1e-4 {
				t.Errorf("query %d: GPU row %d (score %.6f) is not in the CPU's top 10 (10th %.6f)", q, l, gd[q*k+j], last)
			}
		}
		near++
	}
	t.Logf("flat IP %d x %d, %d queries, k %d: CPU (%d cores) %.0f queries/s (%.2f s); GPU %.0f queries/s (%.3f s; copy to GPU %.2f s); %.1fx; top 10 equal on %d queries, near-ties elsewhere %d",
		n, d, nq, k, runtime.GOMAXPROCS(0), float64(nq)/cs, cs, float64(nq)/gs, gs, toGPU.Seconds(), cs/gs, same, near)
	fmt.Printf("RESULT-FLAT cpu_qps=%.0f gpu_qps=%.0f speedup=%.1f same_top10=%d/%d near_ties=%d\n", float64(nq)/cs, float64(nq)/gs, cs/gs, same, nq, near)
}

// unitVecs returns n random unit vectors of d dimensions, made on every
// core, each block from its own seed.
func unitVecs(n, d int, seed uint64) []float32 {
	x := make([]float32, n*d)
	const block = 8192
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for lo := 0; lo < n; lo += block {
		wg.Add(1)
		sem <- struct{}{}
		go func(lo int) {
			defer func() { <-sem; wg.Done() }()
			r := rand.New(rand.NewPCG(seed, uint64(lo)))
			for i := lo; i < min(lo+block, n); i++ {
				v, s := x[i*d:(i+1)*d], 0.0
				for j := range v {
					v[j] = float32(r.NormFloat64())
					s += float64(v[j]) * float64(v[j])
				}
				for j := range v {
					v[j] /= float32(math.Sqrt(s))
				}
			}
		}(lo)
	}
	wg.Wait()
	return x
}
