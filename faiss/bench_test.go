package faiss_test

import (
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// benchN is the database size of BenchmarkSearch: 100,000 by default, or
// MSRAG_FAISS_BENCH_N (scripts/bench_faiss.py passes the size it uses for
// the Python side).
func benchN(tb testing.TB) int {
	tb.Helper()
	if s := os.Getenv("MSRAG_FAISS_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			tb.Fatalf("MSRAG_FAISS_BENCH_N=%q: want a positive integer", s)
		}
		return n
	}
	return 100_000
}

// BenchmarkSearch measures exact inner-product search (Flat) of 384-d
// vectors, k = 100, for batches of 1, 32 and 1,024 queries, in queries/s.
// The thread count is FAISS's default: set OMP_NUM_THREADS to choose it.
func BenchmarkSearch(b *testing.B) {
	const d, k = 384, 100
	nb := benchN(b)
	xb := randVecs(b, 70, nb, d)
	ix := newIndex(b, d, "Flat", faiss.InnerProduct, xb)
	xb = nil
	b.Logf("faiss %s, %d x %d Flat IP, k=%d, %d threads", faiss.Version(), nb, d, k, faiss.Threads())
	for _, batch := range []int{1, 32, 1024} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			xq := randVecs(b, 71, batch, d)
			dist := make([]float32, batch*k)
			labels := make([]int64, batch*k)
			// One untimed call, as the Python side makes (b.Loop starts
			// the clock at its first call).
			if err := ix.SearchInto(xq, k, dist, labels); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(batch * d * 4))
			cpu0 := cpuSeconds(b)
			for b.Loop() {
				if err := ix.SearchInto(xq, k, dist, labels); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuSeconds(b) - cpu0
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "queries/s")
			// Queries per CPU-second of the whole process: on a shared
			// machine it moves less than wall-clock throughput, since time
			// spent waiting for a core is not counted.
			b.ReportMetric(float64(b.N*batch)/cpu, "queries/cpu-s")
		})
	}
}

// cpuSeconds returns the user and system CPU time of the process so far.
func cpuSeconds(tb testing.TB) float64 {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkRescore rescores the 132 hits of each of 1,024 queries (the
// first search of a window for k = 100 with msrag's tie margin) in a Flat
// index of 20,000 vectors of 384 dims: the cost exact scores add to a search.
func BenchmarkRescore(b *testing.B) {
	const d, n, nq, k = 384, 20000, 1024, 132
	ix := newIndex(b, d, "Flat", faiss.InnerProduct, randVecs(b, 1, n, d))
	q := randVecs(b, 2, nq, d)
	_, labels, err := ix.Search(q, k)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ix.Rescore(q, labels, k); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(nq)*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
