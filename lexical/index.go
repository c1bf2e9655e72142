package lexical

import (
	"sort"
	"sync"
	"sync/atomic"
)

// Index is the inverted index of one window: for every term, the rows (the
// window's chunk rows, 0 to Docs()-1) that hold it with its frequency in
// each, and the length in terms of every row. It is built by a [Builder] or
// read by [Read], and never changes after: it is safe for concurrent use.
type Index struct {
	docLen   []uint32 // terms of each row
	tokens   int64    // sum of docLen
	termData string   // the terms, sorted, concatenated
	termEnd  []uint32 // term i is termData[termEnd[i-1]:termEnd[i]]
	df       []uint32 // rows holding term i
	postEnd  []int64  // term i's postings are post[postEnd[i-1]:postEnd[i]]
	post     []byte   // per term, per row: uvarint(row - previous row), uvarint(tf)

	norms    atomic.Pointer[normTable] // the length norms of the last parameters used
	searcher sync.Pool                 // *Searcher
}

// Docs returns the number of rows.
func (ix *Index) Docs() int { return len(ix.docLen) }

// Tokens returns the total length of the rows in terms.
func (ix *Index) Tokens() int64 { return ix.tokens }

// NumTerms returns the number of distinct terms.
func (ix *Index) NumTerms() int { return len(ix.termEnd) }

// DocLen returns the length of row in terms; row must be in [0, Docs()).
func (ix *Index) DocLen(row int) int { return int(ix.docLen[row]) }

// term returns the i-th term in sorted order.
func (ix *Index) term(i int) string {
	start := uint32(0)
	if i > 0 {
		start = ix.termEnd[i-1]
	}
	return ix.termData[start:ix.termEnd[i]]
}

// postings returns term i's encoded postings.
func (ix *Index) postings(i int) []byte {
	start := int64(0)
	if i > 0 {
		start = ix.postEnd[i-1]
	}
	return ix.post[start:ix.postEnd[i]]
}

// lookup returns the number of term t, or -1.
func (ix *Index) lookup(t string) int {
	n := len(ix.termEnd)
	i := sort.Search(n, func(i int) bool { return ix.term(i) >= t })
	if i < n && ix.term(i) == t {
		return i
	}
	return -1
}

// DF returns the number of rows holding term t.
func (ix *Index) DF(t string) int {
	if i := ix.lookup(t); i >= 0 {
		return int(ix.df[i])
	}
	return 0
}

// Terms calls fn for every term in sorted order with its document
// frequency, until fn returns false.
func (ix *Index) Terms(fn func(term string, df int) bool) {
	for i := range ix.termEnd {
		if !fn(ix.term(i), int(ix.df[i])) {
			return
		}
	}
}

// Stats holds the collection statistics BM25 scores with: the number of
// documents, their total length, and the document frequency of terms. An
// index's own ([Index.Stats]) score as that index alone; the sum ([Stats.Add])
// of the statistics of every shard of a collection, passed to each shard's
// search, makes the shards rank together exactly as one index would.
type Stats struct {
	Docs   int64
	Tokens int64
	// DF maps a term to the number of documents holding it. It needs only
	// the terms of the queries searched with it.
	DF map[string]int64
}

// Stats returns the index's statistics, with the document frequency of
// every term of the queries (0 for a term the index lacks).
func (ix *Index) Stats(queries [][]string) Stats {
	st := Stats{Docs: int64(len(ix.docLen)), Tokens: ix.tokens, DF: make(map[string]int64)}
	for _, q := range queries {
		for _, t := range q {
			if _, ok := st.DF[t]; !ok {
				st.DF[t] = int64(ix.DF(t))
			}
		}
	}
	return st
}

// Add adds o to s: documents, tokens, and every document frequency.
func (s *Stats) Add(o Stats) {
	s.Docs += o.Docs
	s.Tokens += o.Tokens
	if s.DF == nil {
		s.DF = make(map[string]int64, len(o.DF))
	}
	for t, n := range o.DF {
		s.DF[t] += n
	}
}
