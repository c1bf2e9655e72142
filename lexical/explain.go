package lexical

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/msrag/msrag/fuse"
)

// Match is one query term found in a row: the evidence behind a hit.
type Match struct {
	Term  string
	TF    int     // occurrences in the row
	Score float64 // the term's part of the row's score (times its count in the query)
}

// Explain returns the terms of query that row holds, in order of first
// appearance in the query, with their frequencies and parts of the score,
// under the same parameters and statistics as [Index.Search]: the parts sum
// to the row's score (before its rounding to float32). It decodes the
// postings of each query term: use it for the hits shown, not for all.
func (ix *Index) Explain(query []string, row int, p BM25, st *Stats) ([]Match, error) {
	if row < 0 || row >= len(ix.docLen) {
		return nil, fmt.Errorf("lexical: explain row %d of an index of %d rows", row, len(ix.docLen))
	}
	if err := p.check(); err != nil {
		return nil, err
	}
	n, tokens, err := ix.collection(st)
	if err != nil {
		return nil, err
	}
	s := &Searcher{ix: ix}
	if err := s.weigh(query, n, st); err != nil {
		return nil, fmt.Errorf("lexical: explain: %w", err)
	}
	var out []Match
	for _, tw := range s.weights {
		tf := ix.tf(tw.id, row)
		if tf == 0 {
			continue
		}
		f := float64(tf)
		norm := p.K1 * (1 - p.B + p.B*float64(ix.docLen[row])/(float64(tokens)/float64(n)))
		out = append(out, Match{Term: ix.term(tw.id), TF: tf, Score: tw.w * f / (f + norm)})
	}
	return out, nil
}

// Holds returns, for each of rows, the terms of query it holds, in order of
// first appearance in the query, each once: the terms of Explain's matches.
// It decodes the postings of each query term once for all the rows, so that
// explaining the many chunks shown for a query costs about what searching
// it did, not that times the chunks. A row out of range is an error.
func (ix *Index) Holds(query []string, rows []int) ([][]string, error) {
	order := make([]int, len(rows)) // rows' positions, by row
	for i, r := range rows {
		if r < 0 || r >= len(ix.docLen) {
			return nil, fmt.Errorf("lexical: explain row %d of an index of %d rows", r, len(ix.docLen))
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return rows[a] - rows[b] })
	out := make([][]string, len(rows))
	seen := map[int]bool{}
	for _, t := range query {
		id := ix.lookup(t)
		if id < 0 || seen[id] {
			continue
		}
		seen[id] = true
		p, r, j := ix.postings(id), int64(-1), 0
		for len(p) > 0 && j < len(order) {
			d, k := binary.Uvarint(p)
			_, k2 := binary.Uvarint(p[k:])
			p, r = p[k+k2:], r+int64(d)
			for j < len(order) && int64(rows[order[j]]) < r {
				j++
			}
			for ; j < len(order) && int64(rows[order[j]]) == r; j++ {
				out[order[j]] = append(out[order[j]], t)
			}
		}
	}
	return out, nil
}

// tf returns the frequency of term id in row, 0 when absent.
func (ix *Index) tf(id, row int) int {
	p := ix.postings(id)
	r := int64(-1)
	for len(p) > 0 {
		d, k := binary.Uvarint(p)
		tf, k2 := binary.Uvarint(p[k:])
		p = p[k+k2:]
		if r += int64(d); r >= int64(row) {
			if r == int64(row) {
				return int(tf)
			}
			return 0
		}
	}
	return 0
}

// Fuse returns h as the fuse package's hits of documents: row r becomes
// docOf[r], the document of chunk row r in the window's chunk table; a
// missing hit stays -1. A row outside docOf is an error.
func (h Hits) Fuse(docOf []int32) (fuse.Hits, error) {
	out := fuse.Hits{K: h.K, Docs: make([]int32, len(h.Rows)), Scores: h.Scores}
	for i, r := range h.Rows {
		switch {
		case r == -1:
			out.Docs[i] = -1
		case r < 0 || int(r) >= len(docOf):
			return fuse.Hits{}, fmt.Errorf("lexical: hit %d: row %d outside the %d rows of the chunk table", i, r, len(docOf))
		default:
			out.Docs[i] = docOf[r]
		}
	}
	return out, nil
}
