package faiss_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// TestConcurrentSearch runs searches from many goroutines while another
// goroutine changes nprobe and adds vectors, then closes the index under
// them. Under -race it checks the locking; every search must either match
// the single-goroutine result or fail with ErrClosed.
func TestConcurrentSearch(t *testing.T) {
	const d, nb, nq, k, workers, rounds = 8, 500, 24, 5, 8, 15
	xb := randVecs(t, 50, nb, d)
	xq := randVecs(t, 51, nq, d)
	ix := newIndex(t, d, "IVF4,Flat", faiss.L2, xb)
	if err := ix.SetParam("nprobe", 4); err != nil {
		t.Fatal(err)
	}
	wantD, wantL, err := ix.Search(xq, k)
	if err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds+8)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dist := make([]float32, nq*k)
			labels := make([]int64, nq*k)
			for range rounds {
				if w%2 == 0 {
					if err := ix.SearchInto(xq, k, dist, labels); err != nil {
						errs <- err
						continue
					}
				} else {
					var err error
					if dist, labels, err = ix.Search(xq, k); err != nil {
						errs <- err
						continue
					}
				}
				// The writer only adds far-away vectors and keeps
				// nprobe = nlist, so the nearest neighbours never change.
				for i := range wantD {
					if dist[i] != wantD[i] || labels[i] != wantL[i] {
						errs <- errors.New("concurrent result differs")
						break
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		far := make([]float32, d)
		for i := range far {
			far[i] = 1000
		}
		for range rounds {
			if err := ix.SetParam("nprobe", 4); err != nil {
				errs <- err
			}
			if err := ix.Add(far); err != nil {
				errs <- err
			}
			_ = ix.Ntotal()
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := ix.Ntotal(); got != nb+rounds {
		t.Fatalf("Ntotal = %d, want %d", got, nb+rounds)
	}

	// Close while searches run: each either completes or sees ErrClosed.
	var wg2 sync.WaitGroup
	for range workers {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			for range rounds {
				if _, _, err := ix.Search(xq, k); err != nil && !errors.Is(err, faiss.ErrClosed) {
					t.Error(err)
				}
			}
		}()
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	wg2.Wait()
}
