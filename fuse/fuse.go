package fuse

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Sentinel errors, wrapped by the errors this package returns; test with errors.Is.
var (
	// ErrShape marks hit arrays whose lengths do not agree.
	ErrShape = errors.New("fuse: inconsistent shape")
	// ErrDocRange marks a document index outside [-1, ndocs).
	ErrDocRange = errors.New("fuse: document index out of range")
	// ErrScore marks a chunk score that is NaN where scores are compared.
	ErrScore = errors.New("fuse: invalid score")
	// ErrOptions marks invalid options.
	ErrOptions = errors.New("fuse: invalid options")
)

// Hits holds one window's search results for a batch of queries: K hits per
// query, rank order, row-major. Query q's hit j is Docs[q*K+j] with score
// Scores[q*K+j]; a document of -1 marks a missing hit.
type Hits struct {
	K      int
	Docs   []int32
	Scores []float32
}

// NumQueries returns the number of queries h holds hits for.
func (h Hits) NumQueries() int {
	if h.K <= 0 {
		return 0
	}
	return len(h.Docs) / h.K
}

// Evidence is one chunk behind a fused document.
type Evidence struct {
	Window int32   // index of the window in the slice given to the fuser
	Pos    int32   // position in the window's hit list of the query: hit Docs[q*K+Pos]
	Rank   int32   // the chunk's rank in that list from 0, missing hits not counted
	Score  float32 // the chunk's score
}

// Ranking is the fused result of a batch: K slots per query, row-major.
type Ranking struct {
	NQ, K int
	// Docs[q*K+r] is query q's document at rank r (from 0), -1 in the slots
	// after its last document.
	Docs []int32
	// Scores[q*K+r] is that document's fused score, 0 in empty slots.
	Scores []float64
	// EvStart has NQ*K+1 entries: the evidence of slot i is
	// Evidence[EvStart[i]:EvStart[i+1]].
	EvStart  []int32
	Evidence []Evidence
}

// Query returns query q's documents and fused scores, best first, without
// the empty slots. The slices alias r.
func (r *Ranking) Query(q int) (docs []int32, scores []float64) {
	docs = r.Docs[q*r.K : (q+1)*r.K]
	n := 0
	for n < len(docs) && docs[n] >= 0 {
		n++
	}
	return docs[:n], r.Scores[q*r.K : q*r.K+n]
}

// EvidenceOf returns the chunks behind query q's document at rank (from 0).
// The slice aliases r.
func (r *Ranking) EvidenceOf(q, rank int) []Evidence {
	i := q*r.K + rank
	return r.Evidence[r.EvStart[i]:r.EvStart[i+1]]
}

// Options configures a fuser. The zero value is valid.
type Options struct {
	// K is the number of documents kept per query; 0 means 100.
	K int
	// C is RRF's constant; 0 means 1. RRF only.
	C float64
	// RankBase is the rank RRF gives a window's top chunk; 0 by default,
	// 1 for classic RRF. RRF only.
	RankBase int
	// Workers is the number of goroutines sharing the batch; 0 means 1.
	Workers int
}

type method int

const (
	methodRRF method = iota
	methodMaxP
)

// RRF fuses windows with Reciprocal Rank Fusion, every chunk voting for its
// document (see the package documentation). ndocs bounds the document
// indices. All windows must hold the same number of queries; their K may
// differ.
func RRF(windows []Hits, ndocs int, opt Options) (*Ranking, error) {
	return fuse(windows, ndocs, opt, methodRRF)
}

// MaxP ranks each document by its best chunk score in any of windows.
func MaxP(windows []Hits, ndocs int, opt Options) (*Ranking, error) {
	return fuse(windows, ndocs, opt, methodMaxP)
}

// Single ranks documents by their best chunk score in one window: MaxP over
// w alone. Evidence names window 0.
func Single(w Hits, ndocs int, opt Options) (*Ranking, error) {
	return fuse([]Hits{w}, ndocs, opt, methodMaxP)
}

func fuse(windows []Hits, ndocs int, opt Options, m method) (*Ranking, error) {
	if opt.K == 0 {
		opt.K = 100
	}
	if opt.C == 0 {
		opt.C = 1
	}
	if opt.Workers == 0 {
		opt.Workers = 1
	}
	switch {
	case opt.K < 0 || opt.Workers < 0:
		return nil, fmt.Errorf("%w: K %d and Workers %d must not be negative", ErrOptions, opt.K, opt.Workers)
	case m == methodRRF && (float64(opt.RankBase)+opt.C <= 0 || math.IsNaN(opt.C) || math.IsInf(opt.C, 0)):
		return nil, fmt.Errorf("%w: RRF weight 1/(rank+c) needs RankBase + C > 0, got %d + %v", ErrOptions, opt.RankBase, opt.C)
	case len(windows) == 0:
		return nil, fmt.Errorf("%w: no windows", ErrShape)
	case ndocs < 0 || ndocs > math.MaxInt32:
		return nil, fmt.Errorf("%w: ndocs %d", ErrShape, ndocs)
	}
	nq := -1
	for w, h := range windows {
		if h.K <= 0 || len(h.Docs)%h.K != 0 || len(h.Scores) != len(h.Docs) {
			return nil, fmt.Errorf("%w: window %d: K %d, %d documents, %d scores (want K > 0 and equal lengths, a multiple of K)", ErrShape, w, h.K, len(h.Docs), len(h.Scores))
		}
		if nq >= 0 && h.NumQueries() != nq {
			return nil, fmt.Errorf("%w: window %d has %d queries, window 0 has %d", ErrShape, w, h.NumQueries(), nq)
		}
		nq = h.NumQueries()
	}
	out := &Ranking{
		NQ:      nq,
		K:       opt.K,
		Docs:    make([]int32, nq*opt.K),
		Scores:  make([]float64, nq*opt.K),
		EvStart: make([]int32, nq*opt.K+1),
	}
	workers := min(opt.Workers, max(nq, 1))
	fusers := make([]*fuser, workers)
	errs := make([]error, workers)
	parallel := func(work func(p, lo, hi int)) {
		var wg sync.WaitGroup
		for p := range workers {
			lo, hi := nq*p/workers, nq*(p+1)/workers
			wg.Go(func() { work(p, lo, hi) })
		}
		wg.Wait()
	}
	// Pass 1: fuse, select, count evidence per slot.
	parallel(func(p, lo, hi int) {
		fusers[p] = newFuser(windows, ndocs, opt, m, out)
		errs[p] = fusers[p].run(lo, hi)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err // the error of the lowest query
		}
	}
	var total int64
	for i := range nq * opt.K {
		total += int64(out.EvStart[i+1])
		if total > math.MaxInt32 {
			return nil, fmt.Errorf("%w: more than %d evidence entries", ErrShape, math.MaxInt32)
		}
		out.EvStart[i+1] = int32(total)
	}
	// Pass 2: write the evidence into one exactly sized array.
	out.Evidence = make([]Evidence, total)
	parallel(func(p, lo, hi int) { fusers[p].fill(lo, hi) })
	return out, nil
}
