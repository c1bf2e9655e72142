//go:build !gpu

package msrag_test

import (
	"errors"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/faiss"
)

// TestCheckGPUs: no GPUs is always possible; a window k over faiss.MaxGPUK
// on GPUs is an argument error, whatever the build; GPUs on a build without
// FAISS GPU support are unavailable, and OpenWith refuses them before
// reading anything.
func TestCheckGPUs(t *testing.T) {
	for _, tc := range []struct {
		gpus     []int
		channelK int
		want     error
	}{
		{nil, faiss.MaxGPUK + 1, nil},
		{[]int{0}, faiss.MaxGPUK + 1, faiss.ErrArgument},
		{[]int{0, 1}, faiss.MaxGPUK, faiss.ErrGPUUnavailable},
		{[]int{0}, 0, faiss.ErrGPUUnavailable},
	} {
		if err := msrag.CheckGPUs(tc.gpus, tc.channelK); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckGPUs(%v, %d) = %v, want %v", tc.gpus, tc.channelK, err, tc.want)
		}
	}
	if _, err := msrag.OpenWith(msrag.OpenOptions{GPUs: []int{0}}, "no-such-index"); !errors.Is(err, faiss.ErrGPUUnavailable) {
		t.Fatalf("OpenWith with GPUs on a build without FAISS GPU support: %v, want faiss.ErrGPUUnavailable before the index is read", err)
	}
}
