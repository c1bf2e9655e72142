package lexical

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"unicode/utf8"
)

// The file of an index, version 1, all integers little-endian:
//
//	header   magic "msraglex", version u32 (1), rows u32, terms u32,
//	         reserved u32 (0), tokens u64, postings u64 (sum of the
//	         document frequencies), posting bytes u64
//	lengths  rows x u32: each row's length in terms
//	terms    per term, in strictly increasing byte order: uvarint length
//	         (1 to MaxTermBytes), the bytes (valid UTF-8), uvarint document
//	         frequency (>= 1), uvarint size of its postings in bytes
//	postings per term, per row holding it in increasing row order:
//	         uvarint row - previous row (the first from -1), uvarint tf (>= 1)
//	trailer  u32: CRC-32C (Castagnoli) of everything before it
const (
	magic         = "msraglex"
	formatVersion = 1
	headerSize    = 8 + 4*4 + 8*3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteTo writes the index to w in the format [Read] reads, streaming it
// through a buffer. It returns the number of bytes written.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(cw, crc), 1<<16)
	var postings uint64
	for _, df := range ix.df {
		postings += uint64(df)
	}
	h := make([]byte, 0, headerSize)
	h = append(h, magic...)
	for _, v := range []uint32{formatVersion, uint32(len(ix.docLen)), uint32(len(ix.termEnd)), 0} {
		h = binary.LittleEndian.AppendUint32(h, v)
	}
	for _, v := range []uint64{uint64(ix.tokens), postings, uint64(len(ix.post))} {
		h = binary.LittleEndian.AppendUint64(h, v)
	}
	bw.Write(h)
	var buf [3 * binary.MaxVarintLen64]byte
	for _, n := range ix.docLen {
		bw.Write(binary.LittleEndian.AppendUint32(buf[:0], n))
	}
	for i := range ix.termEnd {
		t := ix.term(i)
		bw.Write(binary.AppendUvarint(buf[:0], uint64(len(t))))
		bw.WriteString(t)
		b := binary.AppendUvarint(buf[:0], uint64(ix.df[i]))
		bw.Write(binary.AppendUvarint(b, uint64(len(ix.postings(i)))))
	}
	bw.Write(ix.post)
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("lexical: writing index: %w", err)
	}
	if _, err := cw.Write(binary.LittleEndian.AppendUint32(buf[:0], crc.Sum32())); err != nil {
		return cw.n, fmt.Errorf("lexical: writing index: %w", err)
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Read reads an index of size bytes written by [Index.WriteTo] (the
// signature of a parse function of internal/store's ReadFile). It checks
// everything: the checksum, the counts against the size before allocating,
// the order of terms and rows, every length and frequency. Any problem is an
// error wrapping [ErrCorrupt], never a panic; memory stays within a small
// multiple of size.
func Read(r io.Reader, size int64) (*Index, error) {
	if size < headerSize+4 || size > math.MaxInt {
		return nil, corrupt("size %d bytes", size)
	}
	b, err := io.ReadAll(io.LimitReader(r, size+1))
	if err != nil {
		return nil, fmt.Errorf("lexical: reading index: %w", err)
	}
	if int64(len(b)) != size {
		return nil, corrupt("%d bytes where %d were announced", len(b), size)
	}
	body := b[:len(b)-4]
	if got, want := crc32.Checksum(body, castagnoli), binary.LittleEndian.Uint32(b[len(b)-4:]); got != want {
		return nil, corrupt("checksum %08x, file says %08x", got, want)
	}
	return parse(body)
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("lexical: %w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// header is the fixed part of the file.
type header struct {
	rows, terms                uint32
	tokens, postings, postSize uint64
}

func parseHeader(b []byte) (header, error) {
	var h header
	if string(b[:8]) != magic {
		return h, corrupt("not a lexical index (magic %q)", b[:8])
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != formatVersion {
		return h, corrupt("format version %d, this build reads %d", v, formatVersion)
	}
	h.rows, h.terms = le.Uint32(b[12:]), le.Uint32(b[16:])
	if v := le.Uint32(b[20:]); v != 0 {
		return h, corrupt("reserved field %d", v)
	}
	h.tokens, h.postings, h.postSize = le.Uint64(b[24:]), le.Uint64(b[32:]), le.Uint64(b[40:])
	rest := uint64(len(b) - headerSize)
	switch {
	case uint64(h.rows)*4 > rest:
		return h, corrupt("%d rows do not fit in %d bytes", h.rows, rest)
	case h.rows >= math.MaxInt32:
		return h, corrupt("%d rows", h.rows)
	case uint64(h.terms)*4 > rest: // a term takes at least 4 bytes
		return h, corrupt("%d terms do not fit in %d bytes", h.terms, rest)
	case h.postSize > rest, h.postings > h.postSize/2:
		return h, corrupt("%d postings in %d bytes, in a file of %d", h.postings, h.postSize, rest)
	case h.postings > h.tokens, h.postings > uint64(h.rows)*uint64(h.terms):
		return h, corrupt("%d postings for %d rows, %d terms, %d tokens", h.postings, h.rows, h.terms, h.tokens)
	}
	return h, nil
}

// parse decodes and checks the body of a file (the trailer removed).
func parse(b []byte) (*Index, error) {
	h, err := parseHeader(b)
	if err != nil {
		return nil, err
	}
	p := b[headerSize:]
	ix := &Index{docLen: make([]uint32, h.rows), tokens: int64(h.tokens)}
	var sum uint64
	for i := range ix.docLen {
		ix.docLen[i] = binary.LittleEndian.Uint32(p[4*i:])
		sum += uint64(ix.docLen[i])
	}
	if sum != h.tokens {
		return nil, corrupt("row lengths sum to %d, header says %d tokens", sum, h.tokens)
	}
	p = p[4*h.rows:]
	vocabSize := uint64(len(p)) - h.postSize
	if uint64(len(p)) < h.postSize {
		return nil, corrupt("postings of %d bytes after %d bytes", h.postSize, len(p))
	}
	if err := ix.parseTerms(p[:vocabSize], h); err != nil {
		return nil, err
	}
	ix.post = p[vocabSize:]
	if err := ix.checkPostings(h); err != nil {
		return nil, err
	}
	return ix, nil
}

// parseTerms decodes the term table.
func (ix *Index) parseTerms(p []byte, h header) error {
	ix.termEnd = make([]uint32, h.terms)
	ix.df = make([]uint32, h.terms)
	ix.postEnd = make([]int64, h.terms)
	data := make([]byte, 0, len(p))
	prev := 0 // start of the previous term in data
	var postEnd, postings uint64
	for i := range ix.termEnd {
		n, k := binary.Uvarint(p)
		if k <= 0 || n == 0 || n > MaxTermBytes || uint64(len(p)-k) < n {
			return corrupt("term %d: bad length", i)
		}
		t := p[k : k+int(n)]
		p = p[k+int(n):]
		if !utf8.Valid(t) || (i > 0 && bytes.Compare(t, data[prev:]) <= 0) {
			return corrupt("term %d (%q): not valid UTF-8 or out of order", i, t)
		}
		df, k1 := binary.Uvarint(p)
		if k1 <= 0 {
			return corrupt("term %d (%q): bad document frequency", i, t)
		}
		sz, k2 := binary.Uvarint(p[k1:])
		if k2 <= 0 || df == 0 || df > uint64(h.rows) || sz < 2*df || sz > h.postSize-postEnd {
			return corrupt("term %d (%q): document frequency %d, %d bytes of postings", i, t, df, sz)
		}
		p = p[k1+k2:]
		prev = len(data)
		data = append(data, t...)
		postEnd += sz
		postings += df
		ix.termEnd[i], ix.df[i], ix.postEnd[i] = uint32(len(data)), uint32(df), int64(postEnd)
	}
	if len(p) != 0 || postEnd != h.postSize || postings != h.postings {
		return corrupt("term table: %d bytes left, postings %d bytes and %d entries, header says %d and %d",
			len(p), postEnd, postings, h.postSize, h.postings)
	}
	ix.termData = string(data)
	return nil
}

// checkPostings decodes every posting list: rows in range and increasing,
// frequencies >= 1, each list of its term's length and document
// frequency, and each row's frequencies summing to its length.
func (ix *Index) checkPostings(h header) error {
	lens := make([]uint64, h.rows)
	for i := range ix.termEnd {
		p := ix.postings(i)
		row := int64(-1)
		for n := uint32(0); n < ix.df[i]; n++ {
			d, k := binary.Uvarint(p)
			if k <= 0 || d == 0 || d > uint64(h.rows) {
				return corrupt("term %q: posting %d: bad row delta", ix.term(i), n)
			}
			tf, k2 := binary.Uvarint(p[k:])
			row += int64(d)
			if k2 <= 0 || tf == 0 || row >= int64(h.rows) || tf > uint64(ix.docLen[row]) {
				return corrupt("term %q: posting %d: row %d, frequency %d", ix.term(i), n, row, tf)
			}
			lens[row] += tf
			p = p[k+k2:]
		}
		if len(p) != 0 {
			return corrupt("term %q: %d bytes after its %d postings", ix.term(i), len(p), ix.df[i])
		}
	}
	for row, n := range lens {
		if n != uint64(ix.docLen[row]) {
			return corrupt("row %d: frequencies sum to %d, its length is %d", row, n, ix.docLen[row])
		}
	}
	return nil
}
