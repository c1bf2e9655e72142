package lexical

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Builder collects the terms of a window's rows, in row order, and builds
// the [Index]. The zero value is ready to use. A Builder is not safe for
// concurrent use.
type Builder struct {
	ids     map[string]uint32 // term -> number in order of first sight
	terms   []string          // number -> term
	df      []uint32          // number -> rows holding it
	last    []int32           // number -> last row that held it
	post    [][]byte          // number -> encoded postings
	docLen  []uint32
	tokens  int64
	bytes   int64 // of the distinct terms
	scratch []uint32
}

// Len returns the number of rows added: the row the next Add takes.
func (b *Builder) Len() int { return len(b.docLen) }

// Add adds row's terms (as an [Analyzer] returned them, repeats included;
// none for an empty chunk). Rows come in order: row must be [Builder.Len],
// otherwise the error wraps [ErrRow]. Add keeps the term strings.
func (b *Builder) Add(row int, terms []string) error {
	if row != len(b.docLen) {
		return fmt.Errorf("lexical: adding row %d: %w (next row is %d)", row, ErrRow, len(b.docLen))
	}
	if row >= math.MaxInt32 {
		return fmt.Errorf("lexical: adding row %d: too many rows", row)
	}
	if uint64(len(terms)) > math.MaxUint32 {
		return fmt.Errorf("lexical: adding row %d: %d terms, more than a row may hold", row, len(terms))
	}
	for _, t := range terms {
		if t == "" || len(t) > MaxTermBytes {
			return fmt.Errorf("lexical: adding row %d: a term of %d bytes (want 1 to %d)", row, len(t), MaxTermBytes)
		}
	}
	if b.ids == nil {
		b.ids = make(map[string]uint32)
	}
	ids := b.scratch[:0]
	for _, t := range terms {
		id, ok := b.ids[t]
		if !ok {
			if b.bytes+int64(len(t)) > math.MaxUint32 {
				return fmt.Errorf("lexical: adding row %d: the vocabulary passes 4 GiB", row)
			}
			b.bytes += int64(len(t))
			id = uint32(len(b.terms))
			b.ids[t] = id
			b.terms = append(b.terms, strings.Clone(t))
			b.df = append(b.df, 0)
			b.last = append(b.last, -1)
			b.post = append(b.post, nil)
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		id := ids[i]
		p := binary.AppendUvarint(b.post[id], uint64(int32(row)-b.last[id]))
		b.post[id] = binary.AppendUvarint(p, uint64(j-i))
		b.last[id] = int32(row)
		b.df[id]++
		i = j
	}
	b.scratch = ids
	b.docLen = append(b.docLen, uint32(len(terms)))
	b.tokens += int64(len(terms))
	return nil
}

// Build returns the index of the rows added and resets the Builder.
func (b *Builder) Build() *Index {
	order := make([]uint32, len(b.terms))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return cmp.Compare(b.terms[x], b.terms[y]) })
	ix := &Index{docLen: b.docLen, tokens: b.tokens}
	if ix.docLen == nil {
		ix.docLen = []uint32{}
	}
	var data strings.Builder
	var size int64
	for _, id := range order {
		size += int64(len(b.post[id]))
	}
	ix.post = make([]byte, 0, size)
	ix.termEnd = make([]uint32, len(order))
	ix.df = make([]uint32, len(order))
	ix.postEnd = make([]int64, len(order))
	for i, id := range order {
		data.WriteString(b.terms[id])
		ix.termEnd[i] = uint32(data.Len())
		ix.df[i] = b.df[id]
		ix.post = append(ix.post, b.post[id]...)
		ix.postEnd[i] = int64(len(ix.post))
	}
	ix.termData = data.String()
	*b = Builder{}
	return ix
}
