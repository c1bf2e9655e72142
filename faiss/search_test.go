package faiss_test

import (
	"strings"
	"testing"

	"github.com/msrag/msrag/faiss"
)

func TestFlatMatchesBruteForce(t *testing.T) {
	const d, nb, k = 16, 600, 10
	xb := randVecs(t, 1, nb, d)
	for _, m := range []faiss.Metric{faiss.InnerProduct, faiss.L2} {
		ix := newIndex(t, d, "Flat", m, xb)
		// FAISS uses a per-query scan below 20 queries and BLAS at 20 and
		// above: cover both.
		for _, nq := range []int{1, 7, 40} {
			t.Run(m.String()+"/"+itoa(nq), func(t *testing.T) {
				xq := randVecs(t, uint64(100+nq), nq, d)
				dist, labels, err := ix.Search(xq, k)
				if err != nil {
					t.Fatal(err)
				}
				if len(dist) != nq*k || len(labels) != nq*k {
					t.Fatalf("got %d distances, %d labels, want %d", len(dist), len(labels), nq*k)
				}
				checkExact(t, xb, xq, d, k, m, dist, labels, 1e-4)
			})
		}
	}
}

func TestKLargerThanNtotal(t *testing.T) {
	const d = 8
	xb := randVecs(t, 2, 5, d)
	ix := newIndex(t, d, "Flat", faiss.L2, xb)
	xq := randVecs(t, 3, 2, d)
	dist, labels, err := ix.Search(xq, 8)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, xb, xq, d, 8, faiss.L2, dist, labels, 1e-4)
}

func TestIVFFullProbeIsExact(t *testing.T) {
	const d, nb, nq, k, nlist = 16, 1200, 25, 10, 16
	xb := randVecs(t, 4, nb, d)
	xq := randVecs(t, 5, nq, d)
	for _, m := range []faiss.Metric{faiss.InnerProduct, faiss.L2} {
		t.Run(m.String(), func(t *testing.T) {
			ix := newIndex(t, d, "IVF16,Flat", m, xb)
			if err := ix.SetParam("nprobe", nlist); err != nil {
				t.Fatal(err)
			}
			dist, labels, err := ix.Search(xq, k)
			if err != nil {
				t.Fatal(err)
			}
			checkExact(t, xb, xq, d, k, m, dist, labels, 1e-4)
		})
	}
}

func TestHNSWRecall(t *testing.T) {
	const d, nb, nq, k = 16, 3000, 100, 10
	xb := randVecs(t, 6, nb, d)
	xq := randVecs(t, 7, nq, d)
	ix := newIndex(t, d, "HNSW32", faiss.L2, xb)
	if err := ix.SetParam("efSearch", 64); err != nil {
		t.Fatal(err)
	}
	_, labels, err := ix.Search(xq, k)
	if err != nil {
		t.Fatal(err)
	}
	want := bruteForce(xb, xq, d, k, faiss.L2)
	hits := 0
	for i := range nq {
		kth := want[i][k-1]
		for r := range k {
			lab := labels[i*k+r]
			if lab >= 0 && score(xq[i*d:(i+1)*d], xb[int(lab)*d:(int(lab)+1)*d], faiss.L2) <= kth*(1+1e-5) {
				hits++
			}
		}
	}
	recall := float64(hits) / float64(nq*k)
	t.Logf("HNSW32 efSearch=64 recall@10 = %.4f", recall)
	if recall < 0.95 {
		t.Fatalf("recall@10 = %.4f, want >= 0.95", recall)
	}
}

func TestSearchIntoMatchesSearch(t *testing.T) {
	const d, k = 8, 4
	xb := randVecs(t, 8, 100, d)
	xq := randVecs(t, 9, 3, d)
	ix := newIndex(t, d, "Flat", faiss.InnerProduct, xb)
	dist, labels, err := ix.Search(xq, k)
	if err != nil {
		t.Fatal(err)
	}
	d2 := make([]float32, 3*k)
	l2 := make([]int64, 3*k)
	if err := ix.SearchInto(xq, k, d2, l2); err != nil {
		t.Fatal(err)
	}
	for i := range dist {
		if dist[i] != d2[i] || labels[i] != l2[i] {
			t.Fatalf("entry %d: SearchInto (%g, %d), Search (%g, %d)", i, d2[i], l2[i], dist[i], labels[i])
		}
	}
	allocs := testing.AllocsPerRun(20, func() {
		if err := ix.SearchInto(xq, k, d2, l2); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("SearchInto allocates %v times per call, want 0", allocs)
	}
}

func TestResetAndAccessors(t *testing.T) {
	const d = 8
	xb := randVecs(t, 10, 30, d)
	ix := newIndex(t, d, "Flat", faiss.L2, xb)
	if ix.Dim() != d || ix.Ntotal() != 30 || !ix.IsTrained() || ix.Metric() != faiss.L2 || ix.OnGPU() {
		t.Fatalf("Dim %d Ntotal %d IsTrained %v Metric %v OnGPU %v", ix.Dim(), ix.Ntotal(), ix.IsTrained(), ix.Metric(), ix.OnGPU())
	}
	if err := ix.Reset(); err != nil {
		t.Fatal(err)
	}
	if n := ix.Ntotal(); n != 0 {
		t.Fatalf("Ntotal after Reset = %d", n)
	}
	_, labels, err := ix.Search(xb[:d], 2)
	if err != nil {
		t.Fatal(err)
	}
	if labels[0] != -1 || labels[1] != -1 {
		t.Fatalf("labels on empty index = %v, want -1s", labels)
	}
}

func TestSetThreads(t *testing.T) {
	old := faiss.Threads()
	defer faiss.SetThreads(old)
	faiss.SetThreads(1)
	if n := faiss.Threads(); n != 1 {
		t.Fatalf("Threads() = %d after SetThreads(1)", n)
	}
	// Results must not depend on the thread count.
	const d, k = 16, 5
	xb := randVecs(t, 11, 500, d)
	xq := randVecs(t, 12, 30, d)
	ix := newIndex(t, d, "Flat", faiss.InnerProduct, xb)
	dist, labels, err := ix.Search(xq, k)
	if err != nil {
		t.Fatal(err)
	}
	checkExact(t, xb, xq, d, k, faiss.InnerProduct, dist, labels, 1e-4)
	faiss.SetThreads(0)
	if n := faiss.Threads(); n < 1 {
		t.Fatalf("Threads() = %d after SetThreads(0)", n)
	}
}

func TestVersion(t *testing.T) {
	if o := faiss.CompileOptions(); !strings.Contains(o, "OPTIMIZE") {
		t.Errorf("CompileOptions() = %q, want the library's options (OPTIMIZE, ...)", o)
	}
	v := faiss.Version()
	if len(v) < 5 || v[0] != '1' || v[1] != '.' {
		t.Fatalf("Version() = %q, want 1.x.y", v)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}
