//go:build !gpu

package faiss_test

import (
	"testing"

	"github.com/msrag/msrag/faiss"
)

func TestGPUStub(t *testing.T) {
	ix := newIndex(t, 4, "Flat", faiss.L2, randVecs(t, 30, 10, 4))
	if faiss.GPUAvailable || faiss.NumGPUs() != 0 {
		t.Fatal("stub build reports a GPU")
	}
	g, err := ix.ToGPU(0)
	if g != nil || err == nil {
		t.Fatal("ToGPU succeeded without the gpu tag")
	}
	checkErr(t, err, faiss.ErrGPUUnavailable, "to gpu")
	c, err := ix.ToCPU()
	if c != nil || err == nil {
		t.Fatal("ToCPU succeeded without the gpu tag")
	}
	checkErr(t, err, faiss.ErrGPUUnavailable, "to cpu")
}
