package faiss

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// precheck reads the start of a serialised index and checks the fields that
// FAISS's reader uses before checking them itself. FAISS 1.7.3 divides by a
// product quantizer's sub-quantizer count as soon as it has read it, so a
// corrupt count of zero would end the process with SIGFPE; no C++ code can
// catch that, hence this pass in Go before the native read.
//
// It understands product-quantizer indices ("IxPq", "IxPQ", "IxPo") and
// IVF-PQ ("IwPQ") over a flat coarse quantizer, and stops at the first part it
// does not understand, leaving the rest to the checks in the shim.
func precheck(r io.Reader) error {
	s := &scanner{r: bufio.NewReaderSize(r, 1<<16)}
	err := s.index(0)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// Truncation is reported by FAISS's reader with its own message.
		return nil
	}
	return err
}

type scanner struct {
	r   *bufio.Reader
	off int64
	buf [8]byte
}

var errStop = errors.New("stop")

func (s *scanner) read(n int) ([]byte, error) {
	b := s.buf[:n]
	if _, err := io.ReadFull(s.r, b); err != nil {
		return nil, err
	}
	s.off += int64(n)
	return b, nil
}

func (s *scanner) u8() (uint8, error) {
	b, err := s.read(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (s *scanner) u32() (uint32, error) {
	b, err := s.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (s *scanner) u64() (uint64, error) {
	b, err := s.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (s *scanner) skip(n uint64) error {
	for n > 0 {
		step := min(n, 1<<30)
		got, err := s.r.Discard(int(step))
		s.off += int64(got)
		if err != nil {
			return err
		}
		n -= step
	}
	return nil
}

// vector skips a FAISS vector: an 8-byte length then length*elem bytes.
func (s *scanner) vector(elem uint64) error {
	n, err := s.u64()
	if err != nil {
		return err
	}
	if n > (1<<62)/elem {
		return io.ErrUnexpectedEOF // FAISS rejects it with its own message
	}
	return s.skip(n * elem)
}

// header reads FAISS's common index header and returns the dimension.
func (s *scanner) header() (int32, error) {
	d, err := s.u32()
	if err != nil {
		return 0, err
	}
	if err := s.skip(8 + 8 + 8 + 1); err != nil { // ntotal, two dummies, is_trained
		return 0, err
	}
	metric, err := s.u32()
	if err != nil {
		return 0, err
	}
	if metric > 1 {
		if err := s.skip(4); err != nil { // metric_arg
			return 0, err
		}
	}
	return int32(d), nil
}

func fourcc(s string) uint32 {
	return binary.LittleEndian.Uint32([]byte(s))
}

func (s *scanner) index(depth int) error {
	if depth > 4 {
		return errStop
	}
	h, err := s.u32()
	if err != nil {
		return err
	}
	switch h {
	case fourcc("IxFI"), fourcc("IxF2"), fourcc("IxFl"):
		if depth == 0 {
			return errStop // nothing to check, and no need to read it all
		}
		if _, err := s.header(); err != nil {
			return err
		}
		return s.vector(4)
	case fourcc("IxPq"), fourcc("IxPQ"), fourcc("IxPo"):
		d, err := s.header()
		if err != nil {
			return err
		}
		return s.pq(d)
	case fourcc("IwPQ"):
		d, err := s.header()
		if err != nil {
			return err
		}
		if err := s.skip(8 + 8); err != nil { // nlist, nprobe
			return err
		}
		if err := s.index(depth + 1); err != nil { // coarse quantizer
			return err
		}
		if err := s.directMap(); err != nil {
			return err
		}
		if err := s.skip(1 + 8); err != nil { // by_residual, code_size
			return err
		}
		return s.pq(d)
	}
	return errStop
}

func (s *scanner) directMap() error {
	kind, err := s.u8()
	if err != nil {
		return err
	}
	if err := s.vector(8); err != nil {
		return err
	}
	if kind == 2 { // hash table: pairs of int64
		return s.vector(16)
	}
	return nil
}

// pq checks a product quantizer's shape against the index dimension d.
func (s *scanner) pq(d int32) error {
	at := s.off
	pd, err := s.u64()
	if err != nil {
		return err
	}
	m, err := s.u64()
	if err != nil {
		return err
	}
	nbits, err := s.u64()
	if err != nil {
		return err
	}
	switch {
	case m == 0:
		return fmt.Errorf("%w: product quantizer at byte %d has 0 sub-quantizers", ErrCorrupt, at)
	case pd != uint64(d) || d <= 0 || pd%m != 0:
		return fmt.Errorf("%w: product quantizer at byte %d: dimension %d, index dimension %d, %d sub-quantizers",
			ErrCorrupt, at, pd, d, m)
	case nbits == 0 || nbits > 16:
		return fmt.Errorf("%w: product quantizer at byte %d has %d bits per code", ErrCorrupt, at, nbits)
	}
	return errStop
}
