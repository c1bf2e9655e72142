package faiss

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Flat reports whether the index is an exact flat index (factory "Flat" on
// the CPU), whose search results [Index.Rescore] can score canonically.
func (ix *Index) Flat() bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.ptr != nil && C.msrag_index_is_flat(ix.ptr) != 0
}

// Rescore returns the score of each (query, label) pair of a search of a flat
// index: queries holds n rows and labels n*k entries (as Search returns them),
// and the result has the distance of each pair in Search's units (inner
// product, or squared L2), 0 for a label < 0.
//
// Each score is computed on its own, one vector against one vector, so it is
// the same whatever batch the query came in. Search's own scores are not:
// from FAISS's distance_compute_blas_threshold queries (20) on, FAISS scores
// a batch with BLAS, and OpenBLAS's kernels round a pair differently
// depending on the query's place in the batch, the batch's size and the
// vector's place in the index (measured: a row searched again in a smaller
// batch changed in the last bit in up to every row, and an index split in
// shards scored the same pairs differently). The rescored values equal what
// Search gives a batch of fewer than 20 queries.
func (ix *Index) Rescore(queries []float32, labels []int64, k int) ([]float32, error) {
	n, err := ix.rows("rescore", queries)
	if err != nil {
		return nil, err
	}
	if k < 1 || len(labels) != n*k {
		return nil, fmt.Errorf("faiss: rescore: %w: %d labels for %d queries of k=%d", ErrArgument, len(labels), n, k)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ptr == nil {
		return nil, fmt.Errorf("faiss: rescore: %w", ErrClosed)
	}
	out := make([]float32, len(labels))
	if n == 0 {
		return out, nil
	}
	threadsMu.RLock()
	defer threadsMu.RUnlock()
	if cerr := C.msrag_index_rescore(ix.ptr, C.int64_t(n), (*C.float)(&queries[0]), C.int64_t(k),
		(*C.int64_t)(unsafe.Pointer(&labels[0])), (*C.float)(&out[0])); cerr != nil {
		return nil, cError("rescore", ErrArgument, cerr)
	}
	return out, nil
}
