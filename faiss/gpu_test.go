//go:build gpu

package faiss_test

import (
	"errors"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// TestGPURoundTrip needs a CUDA device; it is skipped where none is visible.
func TestGPURoundTrip(t *testing.T) {
	if faiss.NumGPUs() == 0 {
		t.Skip("no CUDA device")
	}
	const d, k = 32, 10
	xb := randVecs(t, 60, 2000, d)
	xq := randVecs(t, 61, 50, d)
	for _, m := range []faiss.Metric{faiss.InnerProduct, faiss.L2} {
		t.Run(m.String(), func(t *testing.T) {
			cpu := newIndex(t, d, "Flat", m, xb)
			devices := []int{0}
			if faiss.NumGPUs() > 1 {
				devices = []int{0, 1}
			}
			gpu, err := cpu.ToGPU(devices...)
			if err != nil {
				t.Fatal(err)
			}
			defer gpu.Close()
			if !gpu.OnGPU() || gpu.Ntotal() != cpu.Ntotal() {
				t.Fatalf("OnGPU %v Ntotal %d", gpu.OnGPU(), gpu.Ntotal())
			}
			dist, labels, err := gpu.Search(xq, k)
			if err != nil {
				t.Fatal(err)
			}
			checkExact(t, xb, xq, d, k, m, dist, labels, 1e-3)
			if _, _, err := gpu.Search(xq, faiss.MaxGPUK+1); !errors.Is(err, faiss.ErrArgument) {
				t.Fatalf("k > MaxGPUK: %v, want ErrArgument", err)
			}
			if err := gpu.WriteFile(t.TempDir() + "/x"); !errors.Is(err, faiss.ErrOnGPU) {
				t.Fatalf("WriteFile on GPU: %v, want ErrOnGPU", err)
			}
			back, err := gpu.ToCPU()
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			if back.OnGPU() || back.Ntotal() != cpu.Ntotal() {
				t.Fatalf("back on CPU: OnGPU %v Ntotal %d", back.OnGPU(), back.Ntotal())
			}
		})
	}
}
