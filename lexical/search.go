package lexical

import (
	"encoding/binary"
	"fmt"
	"math"
)

// BM25 holds the parameters of the score. With N documents of average
// length avgdl, a term held by df of them weighs
//
//	idf = ln(1 + (N - df + 0.5) / (df + 0.5))
//
// and a document of length dl holding it tf times scores, for it,
//
//	idf * tf / (tf + K1 * (1 - B + B * dl / avgdl))
//
// summed over the query's terms, a term repeated in the query counting
// each time. This is Lucene's BM25Similarity (since Lucene 8, which dropped
// the constant factor K1 + 1 of the classic formula) and bm25s's method
// "lucene", with exact document lengths where Lucene rounds them to one byte.
type BM25 struct {
	K1 float64 // term frequency saturation, >= 0
	B  float64 // length normalisation, 0 to 1
}

// DefaultBM25 is Anserini's default, k1 = 0.9 and b = 0.4, which BEIR's
// BM25 baselines use.
var DefaultBM25 = BM25{K1: 0.9, B: 0.4}

// MaxK1 is the largest k1 an index is built with (Validate). Lucene and
// bm25s take any k1 >= 0, but tuned values stay within 0 to 3; far beyond,
// the scores shrink as 1/k1 until they round to 0 in float32 (k1 = 1e300
// scores every document 0), a ranking by nothing.
const MaxK1 = 3

// Validate refuses parameters an index should not be built with: k1 not a
// number from 0 to MaxK1, b not a number from 0 to 1 (NaN and the
// infinities included). An index built with other finite values still
// searches.
func (p BM25) Validate() error {
	switch {
	case !(p.K1 >= 0 && p.K1 <= MaxK1):
		return fmt.Errorf("lexical: BM25 k1 %v: want a number from 0 to %v", p.K1, float64(MaxK1))
	case !(p.B >= 0 && p.B <= 1):
		return fmt.Errorf("lexical: BM25 b %v: want a number from 0 to 1", p.B)
	}
	return nil
}

// check refuses parameters the score cannot be computed with.
func (p BM25) check() error {
	if !(p.K1 >= 0) || math.IsInf(p.K1, 0) || !(p.B >= 0 && p.B <= 1) {
		return fmt.Errorf("lexical: BM25 parameters k1 = %v, b = %v (want k1 >= 0, 0 <= b <= 1)", p.K1, p.B)
	}
	return nil
}

// Hits holds the results of a batch of queries, K per query, row-major, in
// the layout of the fuse package's Hits: query q's hit j is row Rows[q*K+j]
// with score Scores[q*K+j], best first; rows of equal score come in
// increasing row order. Row -1 (score 0) fills the slots after a query's
// last matching row.
type Hits struct {
	K      int
	Rows   []int32
	Scores []float32
}

// normTable caches K1 * (1 - B + B * dl / avgdl) for every row.
type normTable struct {
	p     BM25
	avgdl float64
	norm  []float64
}

func (ix *Index) normsFor(p BM25, avgdl float64) []float64 {
	if t := ix.norms.Load(); t != nil && t.p == p && t.avgdl == avgdl {
		return t.norm
	}
	t := &normTable{p: p, avgdl: avgdl, norm: make([]float64, len(ix.docLen))}
	for i, dl := range ix.docLen {
		t.norm[i] = p.K1 * (1 - p.B + p.B*float64(dl)/avgdl)
	}
	ix.norms.Store(t)
	return t.norm
}

// Search returns the k best rows of every query (each a list of terms from
// the analyzer that built the index) under BM25 with parameters p. st holds
// the collection's statistics when the index is one shard of it (the sum of
// every shard's [Index.Stats] for these queries); nil means the index's own.
// A query that matches no row gets k empty slots; an empty index too.
func (ix *Index) Search(queries [][]string, k int, p BM25, st *Stats) (Hits, error) {
	s, _ := ix.searcher.Get().(*Searcher)
	if s == nil {
		s = ix.NewSearcher()
	}
	defer ix.searcher.Put(s)
	return s.Search(queries, k, p, st)
}

// Searcher holds the scratch of searches of one index: an accumulator of a
// float64 per row, reused across queries. It is not safe for concurrent use;
// [Index.Search] keeps a pool of them.
type Searcher struct {
	ix      *Index
	acc     []float64
	touched []int32
	weights []termWeight
	slot    map[int]int // term id -> position in weights, past linearTerms
	heap    topK
}

// NewSearcher returns a Searcher of ix.
func (ix *Index) NewSearcher() *Searcher {
	return &Searcher{ix: ix, acc: make([]float64, len(ix.docLen))}
}

// termWeight is a query term present in the index: its number and weight.
type termWeight struct {
	id int
	w  float64
}

// Search is [Index.Search] with s's scratch.
func (s *Searcher) Search(queries [][]string, k int, p BM25, st *Stats) (Hits, error) {
	if k <= 0 || k > math.MaxInt32/max(1, len(queries)) {
		return Hits{}, fmt.Errorf("lexical: search of %d queries with k = %d (want k > 0 and k x queries < 2^31)", len(queries), k)
	}
	if err := p.check(); err != nil {
		return Hits{}, err
	}
	h := Hits{K: k, Rows: make([]int32, len(queries)*k), Scores: make([]float32, len(queries)*k)}
	for i := range h.Rows {
		h.Rows[i] = -1
	}
	n, tokens, err := s.ix.collection(st)
	if err != nil {
		return Hits{}, err
	}
	if tokens == 0 {
		return h, nil // no row holds a term
	}
	norm := s.ix.normsFor(p, float64(tokens)/float64(n))
	for q, terms := range queries {
		if err := s.weigh(terms, n, st); err != nil {
			return Hits{}, fmt.Errorf("lexical: query %d: %w", q, err)
		}
		s.score(norm)
		s.heap.top(s.acc, s.touched, k, h.Rows[q*k:(q+1)*k], h.Scores[q*k:(q+1)*k])
		for _, r := range s.touched {
			s.acc[r] = 0
		}
		s.touched = s.touched[:0]
	}
	return h, nil
}

// collection returns the number of documents and tokens to score with: the
// index's own, or st's, which must hold at least as many.
func (ix *Index) collection(st *Stats) (n, tokens int64, err error) {
	n, tokens = int64(len(ix.docLen)), ix.tokens
	if st == nil {
		return n, tokens, nil
	}
	if st.Docs < n || st.Tokens < tokens {
		return 0, 0, fmt.Errorf("lexical: %w: %d documents and %d tokens, the index alone has %d and %d",
			ErrStats, st.Docs, st.Tokens, n, tokens)
	}
	return st.Docs, st.Tokens, nil
}

// weigh fills s.weights with the query's distinct terms that the index
// holds, in order of first appearance, each weighing idf times its count.
func (s *Searcher) weigh(terms []string, n int64, st *Stats) error {
	s.weights = s.weights[:0]
	clear(s.slot)
	for _, t := range terms {
		id := s.ix.lookup(t)
		if id < 0 {
			continue
		}
		if i := s.find(id); i >= 0 {
			s.weights[i].w++
			continue
		}
		if len(s.weights) >= linearTerms {
			if s.slot == nil {
				s.slot = make(map[int]int)
			}
			s.slot[id] = len(s.weights)
		}
		s.weights = append(s.weights, termWeight{id: id, w: 1})
	}
	for i := range s.weights {
		id := s.weights[i].id
		df := int64(s.ix.df[id])
		if st != nil {
			g, ok := st.DF[s.ix.term(id)]
			if !ok || g < df || g > n {
				return fmt.Errorf("%w: term %q has document frequency %d in the statistics (present: %v), %d in the index, of %d documents",
					ErrStats, s.ix.term(id), g, ok, df, n)
			}
			df = g
		}
		s.weights[i].w *= idf(df, n)
	}
	return nil
}

// linearTerms is how many distinct terms of a query weigh looks through
// one by one; the others it finds through a map, so that a long query (a
// document used as a query) costs linear time.
const linearTerms = 32

// find returns the position of term id in s.weights, or -1.
func (s *Searcher) find(id int) int {
	for i := range min(len(s.weights), linearTerms) {
		if s.weights[i].id == id {
			return i
		}
	}
	if i, ok := s.slot[id]; ok {
		return i
	}
	return -1
}

// idf is Lucene's BM25 idf.
func idf(df, n int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// score adds each weighted term's contribution to the rows holding it,
// term after term.
func (s *Searcher) score(norm []float64) {
	acc := s.acc
	for _, tw := range s.weights {
		p := s.ix.postings(tw.id)
		row := int64(-1)
		for len(p) > 0 {
			d, k := binary.Uvarint(p)
			tf, k2 := binary.Uvarint(p[k:])
			p = p[k+k2:]
			row += int64(d)
			if acc[row] == 0 {
				s.touched = append(s.touched, int32(row))
			}
			f := float64(tf)
			acc[row] += tw.w * f / (f + norm[row])
		}
	}
}
