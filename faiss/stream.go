package faiss

/*
#include <stdint.h>
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/cgo"
	"unsafe"
)

// stream is what a cgo handle passed to the shim's stream functions holds:
// the Go reader or writer, and the first error it returned (the shim sees only
// a short count).
type stream struct {
	r   io.Reader
	w   io.Writer
	n   int64
	err error
}

//export msragGoWrite
func msragGoWrite(h C.uintptr_t, p unsafe.Pointer, n C.size_t) C.int {
	s := cgo.Handle(h).Value().(*stream)
	if s.err != nil {
		return -1
	}
	k, err := s.w.Write(unsafe.Slice((*byte)(p), int(n)))
	s.n += int64(k)
	if err != nil {
		s.err = err
		return -1
	}
	return 0
}

//export msragGoRead
func msragGoRead(h C.uintptr_t, p unsafe.Pointer, n C.size_t) C.size_t {
	s := cgo.Handle(h).Value().(*stream)
	if s.err != nil {
		return 0
	}
	k, err := io.ReadFull(s.r, unsafe.Slice((*byte)(p), int(n)))
	s.n += int64(k)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		s.err = err
	}
	return C.size_t(k)
}

// WriteTo writes the index to w in FAISS's own format (what FAISS's
// write_index writes), as it serialises it: nothing is buffered whole. It
// returns the bytes written.
func (ix *Index) WriteTo(w io.Writer) (int64, error) { return ix.writeTo(w, "write") }

// writeTo is WriteTo with op naming the operation in errors.
func (ix *Index) writeTo(w io.Writer, op string) (int64, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.ptr == nil {
		return 0, fmt.Errorf("faiss: %s: %w", op, ErrClosed)
	}
	if ix.gpu {
		return 0, fmt.Errorf("faiss: %s: %w: call ToCPU first", op, ErrOnGPU)
	}
	s := &stream{w: w}
	h := cgo.NewHandle(s)
	defer h.Delete()
	cerr := C.msrag_index_write_stream(ix.ptr, C.uintptr_t(h))
	if s.err != nil {
		if cerr != nil {
			C.free(unsafe.Pointer(cerr))
		}
		return s.n, fmt.Errorf("faiss: %s: %w", op, s.err)
	}
	if cerr != nil {
		return s.n, cError(op, ErrNative, cerr)
	}
	return s.n, nil
}

// ReadFrom reads an index of exactly size bytes, written by [Index.WriteTo]
// or FAISS's write_index, from r, in one pass. A truncated or corrupt input
// gives an error wrapping [ErrCorrupt]; an error of r is returned wrapped as
// it is. The caller must Close the result.
func ReadFrom(r io.Reader, size int64) (*Index, error) { return readFrom(r, size, "read") }

// readFrom is ReadFrom with op naming the operation in errors.
func readFrom(r io.Reader, size int64, op string) (*Index, error) {
	if size <= 0 {
		return nil, fmt.Errorf("faiss: %s: %w: empty input", op, ErrCorrupt)
	}
	// precheck reads the start of the input; what it consumed is kept and
	// read again by FAISS (for a Flat index a few bytes, for IVF-PQ the
	// coarse quantizer).
	var head bytes.Buffer
	pre := &stream{r: io.TeeReader(r, &head)}
	if err := precheck(pre.r); err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("faiss: %s: %w", op, err)
	}
	// The bufio.Reader inside precheck may have read ahead of what it
	// parsed; everything it took from r is in head.
	s := &stream{r: io.MultiReader(&head, bufio.NewReaderSize(r, 1<<16))}
	h := cgo.NewHandle(s)
	defer h.Delete()
	var p *C.msrag_index
	cerr := C.msrag_index_read_stream(C.uintptr_t(h), C.size_t(size), &p)
	if s.err != nil {
		if cerr != nil {
			C.free(unsafe.Pointer(cerr))
		}
		if p != nil {
			C.msrag_index_free(p)
		}
		return nil, fmt.Errorf("faiss: %s: %w", op, s.err)
	}
	if cerr != nil {
		return nil, cError(op, ErrCorrupt, cerr)
	}
	return wrap(p, false), nil
}
