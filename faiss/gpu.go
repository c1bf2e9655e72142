//go:build gpu

package faiss

/*
#cgo CPPFLAGS: -DMSRAG_FAISS_GPU
#cgo LDFLAGS: -lcudart -lcublas
#include <stdlib.h>
#include "gpu.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// GPUAvailable reports whether the package was built with GPU support (the
// gpu build tag).
const GPUAvailable = true

// NumGPUs returns the number of CUDA devices FAISS sees, or 0 when it cannot
// query them.
func NumGPUs() int {
	var n C.int
	if cerr := C.msrag_gpu_count(&n); cerr != nil {
		_ = cError("gpu count", ErrNative, cerr) // frees the message; no GPU is the answer
		return 0
	}
	return int(n)
}

// ToGPU copies the index to GPU memory and returns the copy; ix is unchanged
// and stays usable. With no device it uses device 0; with one it copies the
// whole index there; with several it shards the vectors across them, each
// device holding a part and searches merging their results. The copy owns
// its GPU resources, freed by its Close, and serves one call at a time; its
// Search refuses k > [MaxGPUK].
func (ix *Index) ToGPU(devices ...int) (*Index, error) {
	if len(devices) == 0 {
		devices = []int{0}
	}
	n := NumGPUs()
	seen := map[int]bool{}
	for _, d := range devices {
		if d < 0 || d >= n {
			return nil, fmt.Errorf("faiss: to gpu: %w: device %d, have %d GPUs", ErrArgument, d, n)
		}
		if seen[d] {
			return nil, fmt.Errorf("faiss: to gpu: %w: device %d given twice", ErrArgument, d)
		}
		seen[d] = true
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ptr == nil {
		return nil, fmt.Errorf("faiss: to gpu: %w", ErrClosed)
	}
	if ix.gpu {
		return nil, fmt.Errorf("faiss: to gpu: %w already", ErrOnGPU)
	}
	devs := make([]C.int, len(devices))
	for i, d := range devices {
		devs[i] = C.int(d)
	}
	var p *C.msrag_index
	if cerr := C.msrag_index_to_gpu(ix.ptr, &devs[0], C.int(len(devs)), &p); cerr != nil {
		return nil, cError(fmt.Sprintf("to gpu %v", devices), ErrNative, cerr)
	}
	return wrap(p, true), nil
}

// ToCPU copies a GPU index back to main memory and returns the copy, for
// example to write it to disk; ix is unchanged.
func (ix *Index) ToCPU() (*Index, error) {
	ix.mu.Lock() // a GPU index serves one call at a time
	defer ix.mu.Unlock()
	if ix.ptr == nil {
		return nil, fmt.Errorf("faiss: to cpu: %w", ErrClosed)
	}
	if !ix.gpu {
		return nil, fmt.Errorf("faiss: to cpu: %w: index is not on a GPU", ErrArgument)
	}
	var p *C.msrag_index
	if cerr := C.msrag_index_to_cpu(ix.ptr, &p); cerr != nil {
		return nil, cError("to cpu", ErrNative, cerr)
	}
	return wrap(p, false), nil
}

// setParamGPU sets a search parameter through FAISS's GpuParameterSpace;
// the caller holds ix.mu.
func (ix *Index) setParamGPU(name string, value float64) error {
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if cerr := C.msrag_gpu_set_param(ix.ptr, cn, C.double(value)); cerr != nil {
		return cError(fmt.Sprintf("set param %s=%g", name, value), ErrNative, cerr)
	}
	return nil
}
