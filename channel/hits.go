package channel

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
)

// Hits is one channel's ranked rows for a batch of queries: K per query,
// row-major, in the canonical order (Compare); row -1 (document -1, score
// 0, span 0) fills the slots after a query's last hit.
type Hits struct {
	K int
	// Rows are the channel's rows (chunks of its window, or documents),
	// Docs their documents, Scores their scores, Start and End their byte
	// spans in their documents' texts.
	Rows   []int32
	Docs   []int32
	Scores []float32
	Start  []int64
	End    []int64
	// Shards is, in lists merged over shards (Merge), the shard each hit
	// came from; nil in one shard's list.
	Shards []int32
}

// NewHits returns lists of k empty slots for nq queries.
func NewHits(nq, k int) Hits {
	h := Hits{K: k, Rows: make([]int32, nq*k), Docs: make([]int32, nq*k), Scores: make([]float32, nq*k),
		Start: make([]int64, nq*k), End: make([]int64, nq*k)}
	for i := range h.Rows {
		h.Rows[i], h.Docs[i] = -1, -1
	}
	return h
}

// NumQueries returns the number of queries h holds lists for.
func (h Hits) NumQueries() int {
	if h.K <= 0 {
		return 0
	}
	return len(h.Rows) / h.K
}

// Hit is one row of a list.
type Hit struct {
	Row        int32
	Doc        int32
	Score      float32
	Start, End int64
	Shard      int32
}

// At returns query q's hit j (j < K).
func (h Hits) At(q, j int) Hit {
	i := q*h.K + j
	out := Hit{Row: h.Rows[i], Doc: h.Docs[i], Score: h.Scores[i], Start: h.Start[i], End: h.End[i]}
	if h.Shards != nil {
		out.Shard = h.Shards[i]
	}
	return out
}

// set writes x as query q's hit j.
func (h Hits) set(q, j int, x Hit) {
	i := q*h.K + j
	h.Rows[i], h.Docs[i], h.Scores[i], h.Start[i], h.End[i] = x.Row, x.Doc, x.Score, x.Start, x.End
	if h.Shards != nil {
		h.Shards[i] = x.Shard
	}
}

// Compare is the one canonical order of hits: score descending, then
// document, then byte start. Documents are numbered in the order of their
// ids, so the order does not depend on the order an engine returns ties in,
// nor on how the corpus was split into shards.
func Compare(a, b Hit) int {
	return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Doc, b.Doc), cmp.Compare(a.Start, b.Start))
}

// TieMargin is how many rows beyond the k asked for Top asks an engine for
// at first, so that ties at the k-th place are usually seen at once.
const TieMargin = 32

// Top hands an engine blocks of queries, and checks between blocks whether
// the search was cancelled. A block is about topWork query x row pairs (a
// flat FAISS search of 384 dimensions does 2^27 in about 0.1 to 0.5 s on
// one core), and at least minTopBlock queries: a small index is searched in
// few large blocks, which is what keeps a batched search fast (FAISS reads
// the vectors once per block), a large one in blocks that stop promptly.
var topWork = 1 << 27

const minTopBlock = 512

// SearchFunc returns, for the queries qs (positions in the batch), each
// one's n best rows by score, n slots per query, row-major, with ties in any
// order and row -1 after a query's last row.
type SearchFunc func(qs []int, n int) (rows []int32, scores []float32, err error)

// Top returns the canonical top k of every one of nq queries over the rows
// of m, from an engine that returns rows by score with ties in any order.
// It asks for k + TieMargin rows per query; a query whose list is full and
// whose last score still reaches its k-th best is searched again with
// twice as many, until no row tied with its k-th can lie beyond the list.
// It checks ctx between blocks of queries.
func Top(ctx context.Context, nq, k int, m RowMap, search SearchFunc) (Hits, error) {
	if k <= 0 || k > math.MaxInt32/max(nq, 1) {
		return Hits{}, fmt.Errorf("channel: %d queries of k = %d", nq, k)
	}
	out := NewHits(nq, k)
	total := m.Len()
	if total == 0 {
		return out, nil
	}
	n := min(k+TieMargin, total)
	pending := make([]int, nq)
	for q := range pending {
		pending[q] = q
	}
	var buf []Hit
	block := max(minTopBlock, topWork/total)
	for len(pending) > 0 {
		var again []int
		for lo := 0; lo < len(pending); lo += block {
			if err := ctx.Err(); err != nil {
				return Hits{}, err
			}
			qs := pending[lo:min(lo+block, len(pending))]
			rows, scores, err := search(qs, n)
			if err != nil {
				return Hits{}, err
			}
			if len(rows) != len(qs)*n || len(scores) != len(rows) {
				return Hits{}, fmt.Errorf("channel: the engine returned %d rows for %d queries of %d", len(rows), len(qs), n)
			}
			for i, q := range qs {
				var full bool
				buf, full = collect(buf[:0], m, rows[i*n:(i+1)*n], scores[i*n:(i+1)*n])
				slices.SortFunc(buf, Compare)
				if full && n < total && len(buf) >= k && buf[n-1].Score >= minScore(buf[:k]) {
					again = append(again, q)
					continue
				}
				for j := range min(k, len(buf)) {
					out.set(q, j, buf[j])
				}
			}
		}
		pending, n = again, min(2*n, total)
	}
	return out, nil
}

// collect appends the rows of one query's list to buf, mapped by m, and
// reports whether the list is full (no empty slot).
func collect(buf []Hit, m RowMap, rows []int32, scores []float32) ([]Hit, bool) {
	for j, r := range rows {
		if r < 0 {
			return buf, false
		}
		start, end := m.Span(r)
		buf = append(buf, Hit{Row: r, Doc: m.Doc(r), Score: scores[j], Start: start, End: end})
	}
	return buf, true
}

// minScore is the lowest score of hs (the k-th best of a sorted list).
func minScore(hs []Hit) float32 {
	return hs[len(hs)-1].Score
}

// Merge merges lists of one channel for the same queries, one per shard,
// each its shard's canonical top k (Top) with documents numbered over all
// shards, into the k best over all in the canonical order, recording the
// shard each hit came from. The result is what one index over every
// shard's rows would return.
func Merge(lists []Hits, k int) (Hits, error) {
	nq := 0
	if len(lists) > 0 {
		nq = lists[0].NumQueries()
	}
	for s, l := range lists {
		if l.NumQueries() != nq || l.K > k && nq > 0 {
			return Hits{}, fmt.Errorf("channel: shard %d's list holds %d queries of %d, want %d of at most %d", s, l.NumQueries(), l.K, nq, k)
		}
	}
	out := NewHits(nq, k)
	out.Shards = make([]int32, nq*k)
	var buf []Hit
	for q := range nq {
		buf = buf[:0]
		for s, l := range lists {
			for j := range l.K {
				x := l.At(q, j)
				if x.Row < 0 {
					break
				}
				x.Shard = int32(s)
				buf = append(buf, x)
			}
		}
		slices.SortFunc(buf, Compare)
		for j := range min(k, len(buf)) {
			out.set(q, j, buf[j])
		}
	}
	return out, nil
}
