//go:build !gpu

package faiss

import "fmt"

// GPUAvailable reports whether the package was built with GPU support (the
// gpu build tag).
const GPUAvailable = false

// ToGPU needs the gpu build tag; without it, it returns [ErrGPUUnavailable].
func (ix *Index) ToGPU(devices ...int) (*Index, error) {
	return nil, fmt.Errorf("faiss: to gpu: %w", ErrGPUUnavailable)
}

// ToCPU needs the gpu build tag; without it, it returns [ErrGPUUnavailable].
func (ix *Index) ToCPU() (*Index, error) {
	return nil, fmt.Errorf("faiss: to cpu: %w", ErrGPUUnavailable)
}

// NumGPUs returns 0 without the gpu build tag.
func NumGPUs() int { return 0 }

func (ix *Index) setParamGPU(name string, value float64) error {
	return fmt.Errorf("faiss: set param %s: %w", name, ErrGPUUnavailable)
}
