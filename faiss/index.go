package faiss

/*
#cgo CXXFLAGS: -std=c++17 -O2 -fopenmp
#cgo LDFLAGS: -lfaiss -lopenblas -fopenmp -lgomp -lstdc++ -lm
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// MaxGPUK is the largest k a GPU index can search for: classic FAISS GPU
// k-selection stops at 2048. [Index.Search] on a GPU index checks it.
const MaxGPUK = 2048

// threadsMu orders [SetThreads] (which resizes OpenBLAS's global thread
// pool) after every search in flight; searches hold it for reading.
var threadsMu sync.RWMutex

// Index is a FAISS index. Its native memory belongs to the Index and is freed
// by [Index.Close]; slices passed to its methods stay owned by the caller and
// are not kept after a method returns.
//
// Search and SearchInto may be called from many goroutines at once on a CPU
// index. Train, Add, Reset, SetParam and Close wait for searches in flight
// and block new ones until they are done. A GPU index (from [Index.ToGPU])
// serves one call at a time.
type Index struct {
	mu      sync.RWMutex
	ptr     *C.msrag_index // nil once closed
	dim     int
	gpu     bool
	cleanup runtime.Cleanup
}

// New builds an empty index of dimension dim from a FAISS factory string
// ("Flat", "IVF1024,Flat", "HNSW32", "IVF4096,PQ48", ...), ranking by metric.
// The caller must Close it.
func New(dim int, factory string, metric Metric) (*Index, error) {
	if dim < 1 {
		return nil, fmt.Errorf("faiss: new %q: %w: dimension %d < 1", factory, ErrArgument, dim)
	}
	if factory == "" {
		return nil, fmt.Errorf("faiss: new: %w: empty factory string", ErrArgument)
	}
	if metric != InnerProduct && metric != L2 {
		return nil, fmt.Errorf("faiss: new %q: %w: unknown metric %v", factory, ErrArgument, metric)
	}
	if err := CheckFactory(factory, dim); err != nil {
		return nil, err
	}
	cf := C.CString(factory)
	defer C.free(unsafe.Pointer(cf))
	var p *C.msrag_index
	if cerr := C.msrag_index_new(C.int(dim), cf, C.int(metric), &p); cerr != nil {
		return nil, cError(fmt.Sprintf("new %q", factory), ErrNative, cerr)
	}
	return wrap(p, false), nil
}

// wrap takes ownership of p; a cleanup frees it if the Index is dropped
// without Close.
func wrap(p *C.msrag_index, gpu bool) *Index {
	ix := &Index{ptr: p, dim: int(C.msrag_index_dim(p)), gpu: gpu}
	ix.cleanup = runtime.AddCleanup(ix, func(p *C.msrag_index) { C.msrag_index_free(p) }, p)
	return ix
}

// cError turns a failed shim call's message into a Go error wrapping
// sentinel, and frees the message. It is the only place that reads shim errors.
func cError(op string, sentinel error, cerr *C.char) error {
	msg := "no message"
	if cerr != nil {
		msg = C.GoString(cerr)
		C.free(unsafe.Pointer(cerr))
	}
	return fmt.Errorf("faiss: %s: %w: %s", op, sentinel, msg)
}

// Close frees the native index. It is safe to call more than once and on a
// nil Index; it waits for searches in flight.
func (ix *Index) Close() error {
	if ix == nil {
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ptr == nil {
		return nil
	}
	ix.cleanup.Stop()
	C.msrag_index_free(ix.ptr)
	ix.ptr = nil
	return nil
}

// Dim returns the vector dimension.
func (ix *Index) Dim() int { return ix.dim }

// OnGPU reports whether the index lives on a GPU.
func (ix *Index) OnGPU() bool { return ix.gpu }

// Ntotal returns the number of vectors in the index, or 0 once closed.
func (ix *Index) Ntotal() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ptr == nil {
		return 0
	}
	return int64(C.msrag_index_ntotal(ix.ptr))
}

// IsTrained reports whether the index is ready for Add and Search (always
// true for Flat and HNSW indices, true for IVF and PQ after Train).
func (ix *Index) IsTrained() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.ptr != nil && C.msrag_index_is_trained(ix.ptr) != 0
}

// Metric returns the metric the index ranks by.
func (ix *Index) Metric() Metric {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ptr == nil {
		return InnerProduct
	}
	return Metric(C.msrag_index_metric(ix.ptr))
}

// rows checks that x holds whole vectors and returns how many.
func (ix *Index) rows(op string, x []float32) (int, error) {
	if len(x)%ix.dim != 0 {
		return 0, fmt.Errorf("faiss: %s: %w: %d floats is not a multiple of dimension %d",
			op, ErrArgument, len(x), ix.dim)
	}
	return len(x) / ix.dim, nil
}

// Train trains the index on row-major vectors x (len(x) = n * Dim()). Indices
// that need no training accept it and do nothing.
func (ix *Index) Train(x []float32) error {
	n, err := ix.rows("train", x)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("faiss: train: %w: no training vectors", ErrArgument)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ptr == nil {
		return fmt.Errorf("faiss: train: %w", ErrClosed)
	}
	if cerr := C.msrag_index_train(ix.ptr, C.int64_t(n), (*C.float)(&x[0])); cerr != nil {
		return cError(fmt.Sprintf("train on %d vectors", n), ErrNative, cerr)
	}
	return nil
}

// Add appends row-major vectors x (len(x) = n * Dim()); they get the ids
// Ntotal() .. Ntotal()+n-1.
func (ix *Index) Add(x []float32) error {
	n, err := ix.rows("add", x)
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ptr == nil {
		return fmt.Errorf("faiss: add: %w", ErrClosed)
	}
	if C.msrag_index_is_trained(ix.ptr) == 0 {
		return fmt.Errorf("faiss: add: %w: call Train first", ErrNotTrained)
	}
	if n == 0 {
		return nil
	}
	if cerr := C.msrag_index_add(ix.ptr, C.int64_t(n), (*C.float)(&x[0])); cerr != nil {
		return cError(fmt.Sprintf("add %d vectors", n), ErrNative, cerr)
	}
	return nil
}

// Reset removes every vector, keeping the training.
func (ix *Index) Reset() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ptr == nil {
		return fmt.Errorf("faiss: reset: %w", ErrClosed)
	}
	if cerr := C.msrag_index_reset(ix.ptr); cerr != nil {
		return cError("reset", ErrNative, cerr)
	}
	return nil
}

// SetParam sets a search-time parameter through FAISS's ParameterSpace:
// "nprobe" for IVF indices, "efSearch" for HNSW, and the others FAISS knows.
// An unknown name or one that does not apply to the index is an error.
func (ix *Index) SetParam(name string, value float64) error {
	if name == "" {
		return fmt.Errorf("faiss: set param: %w: empty name", ErrArgument)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ptr == nil {
		return fmt.Errorf("faiss: set param %s: %w", name, ErrClosed)
	}
	if ix.gpu {
		return ix.setParamGPU(name, value)
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	if cerr := C.msrag_index_set_param(ix.ptr, cn, C.double(value)); cerr != nil {
		return cError(fmt.Sprintf("set param %s=%g", name, value), ErrNative, cerr)
	}
	return nil
}

// Search returns the k nearest neighbours of each row-major query in queries
// (len(queries) = n * Dim()): dist and labels hold n*k entries, query i's at
// [i*k, (i+1)*k), best first. Where the index holds fewer than k vectors the
// missing labels are -1. The results are new slices owned by the caller.
func (ix *Index) Search(queries []float32, k int) (dist []float32, labels []int64, err error) {
	n, err := ix.checkSearch(queries, k)
	if err != nil {
		return nil, nil, err
	}
	dist = make([]float32, n*k)
	labels = make([]int64, n*k)
	if err := ix.search(queries, n, k, dist, labels); err != nil {
		return nil, nil, err
	}
	return dist, labels, nil
}

// SearchInto is Search writing into caller-provided slices, which need room
// for at least n*k entries; it allocates nothing.
func (ix *Index) SearchInto(queries []float32, k int, dist []float32, labels []int64) error {
	n, err := ix.checkSearch(queries, k)
	if err != nil {
		return err
	}
	if len(dist) < n*k || len(labels) < n*k {
		return fmt.Errorf("faiss: search: %w: result slices hold %d distances and %d labels, need %d",
			ErrArgument, len(dist), len(labels), n*k)
	}
	return ix.search(queries, n, k, dist, labels)
}

func (ix *Index) checkSearch(queries []float32, k int) (int, error) {
	if k < 1 {
		return 0, fmt.Errorf("faiss: search: %w: k = %d < 1", ErrArgument, k)
	}
	if ix.gpu && k > MaxGPUK {
		return 0, fmt.Errorf("faiss: search: %w: k = %d exceeds MaxGPUK = %d on a GPU index",
			ErrArgument, k, MaxGPUK)
	}
	n, err := ix.rows("search", queries)
	if err != nil {
		return 0, err
	}
	if n > 0 && k > math.MaxInt/n {
		return 0, fmt.Errorf("faiss: search: %w: %d queries times k = %d overflows", ErrArgument, n, k)
	}
	return n, nil
}

func (ix *Index) search(queries []float32, n, k int, dist []float32, labels []int64) error {
	if ix.gpu {
		ix.mu.Lock()
		defer ix.mu.Unlock()
	} else {
		ix.mu.RLock()
		defer ix.mu.RUnlock()
	}
	if ix.ptr == nil {
		return fmt.Errorf("faiss: search: %w", ErrClosed)
	}
	if C.msrag_index_is_trained(ix.ptr) == 0 {
		return fmt.Errorf("faiss: search: %w: call Train first", ErrNotTrained)
	}
	if n == 0 {
		return nil
	}
	threadsMu.RLock()
	defer threadsMu.RUnlock()
	if cerr := C.msrag_index_search(ix.ptr, C.int64_t(n), (*C.float)(&queries[0]), C.int64_t(k),
		(*C.float)(&dist[0]), (*C.int64_t)(unsafe.Pointer(&labels[0]))); cerr != nil {
		return cError(fmt.Sprintf("search %d queries k=%d", n, k), ErrNative, cerr)
	}
	return nil
}

// WriteFile writes the index to path in FAISS's own format, readable by
// [ReadFile] and by FAISS's read_index. A failed write removes the file.
func (ix *Index) WriteFile(path string) error {
	// Never through a symbolic link: that would overwrite its target.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("faiss: write %s: %w: a symbolic link", path, ErrArgument)
	}
	if err != nil {
		return fmt.Errorf("faiss: write: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || f.Truncate(0) != nil {
		f.Close()
		return fmt.Errorf("faiss: write %s: %w: not a regular file", path, ErrArgument)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	_, err = ix.writeTo(bw, "write "+path)
	if err == nil {
		if err = bw.Flush(); err != nil {
			err = fmt.Errorf("faiss: write %s: %w", path, err)
		}
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("faiss: write %s: %w", path, cerr)
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// Bytes returns the index serialised in FAISS's format, as WriteFile would
// write it. The slice is owned by the caller.
func (ix *Index) Bytes() ([]byte, error) {
	var b bytes.Buffer
	if _, err := ix.writeTo(&b, "bytes"); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ReadFile reads an index written by [Index.WriteFile] or FAISS's
// write_index. A truncated or corrupt file gives an error wrapping
// [ErrCorrupt]. The caller must Close the result.
func ReadFile(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("faiss: read: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("faiss: read: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("faiss: read %s: %w: not a regular file", path, fs.ErrInvalid)
	}
	return readFrom(f, st.Size(), "read "+path)
}

// ReadBytes reads an index serialised by [Index.Bytes]. It does not keep b.
// The caller must Close the result.
func ReadBytes(b []byte) (*Index, error) {
	return readFrom(bytes.NewReader(b), int64(len(b)), fmt.Sprintf("read %d bytes", len(b)))
}

// SetThreads sets how many threads each FAISS call may use (OpenMP team size,
// and OpenBLAS's pool for batched Flat search); n < 1 restores the default
// (OMP_NUM_THREADS, or the number of CPUs). It applies to every index, waits
// for searches in flight, and holds for calls made on any OS thread.
func SetThreads(n int) {
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	threadsMu.Lock()
	defer threadsMu.Unlock()
	C.msrag_set_threads(C.int(n))
}

// Threads returns the thread count FAISS calls use.
func Threads() int {
	return int(C.msrag_get_threads())
}

// Version returns the version of the FAISS headers the package was built
// with, such as "1.7.3". FAISS 1.7 has no run-time version call; the library
// is linked statically from the same installation as the headers.
func Version() string {
	return C.GoString(C.msrag_faiss_version())
}

// CompileOptions returns what the linked FAISS library reports of how it
// was compiled (faiss::get_compile_options: "OPTIMIZE", the SIMD level such
// as "AVX2", "GPU"), trimmed; "" if it could not say.
func CompileOptions() string {
	c := C.msrag_faiss_compile_options()
	if c == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(c))
	return strings.TrimSpace(C.GoString(c))
}
