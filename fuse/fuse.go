package fuse

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Sentinel errors, wrapped by the errors this package returns; test with errors.Is.
var (
	// ErrShape marks hit arrays, or query weights, whose lengths do not
	// agree.
	ErrShape = errors.New("fuse: inconsistent shape")
	// ErrDocRange marks a document index outside [-1, ndocs).
	ErrDocRange = errors.New("fuse: document index out of range")
	// ErrScore marks a chunk score that is NaN where scores are compared, or
	// infinite where they are summed (CombSUM, CombMNZ).
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

// Options configures a fuser. The zero value is valid: 100 documents per
// query, C 1 and RankBase 0, every chunk voting, raw scores, every window
// weighing 1, one goroutine. An option a rule does not use is ignored,
// except the weights, which [MethodMaxP] refuses; every option must be in
// range (the range checks are [Rule]'s).
type Options struct {
	// K is the number of documents kept per query; 0 means 100.
	K int
	// C is the RRF constant; 0 means 1. MethodRRF and MethodDocRRF.
	C float64
	// RankBase is the rank given to a window's top chunk (MethodRRF) or top
	// document (MethodDocRRF); 0 by default, 1 for classic RRF.
	RankBase int
	// Cap is the most chunks of one document that vote per window: its
	// first Cap hits in the window's list. 0 means all. A chunk left out
	// still takes its rank. MethodRRF only.
	Cap int
	// Norm normalises the per-window document scores of MethodCombSUM and
	// MethodCombMNZ; the zero value keeps them raw.
	Norm Norm
	// Weights holds one weight per window, in the order of the windows
	// given to the fuser; nil means every window weighs 1. Weights must be
	// finite and not negative. A window of weight 0 is left out: its hits
	// neither score nor show as evidence. Not allowed with MethodMaxP.
	Weights []float64
	// Linear holds MethodLinear's coefficients, NumLinear per window in
	// window order (LinearScore, LinearRank, LinearVotes); required by
	// MethodLinear and finite.
	Linear []float64
	// QueryWeights holds per-query window weights, NQ*len(windows) of them,
	// row-major by query: query q weighs window w by
	// QueryWeights[q*len(windows)+w] times Weights[w]. nil means 1. Same
	// rules as Weights; the products must be finite too.
	QueryWeights []float64
	// Workers is the number of goroutines sharing the batch; 0 means 1.
	Workers int
}

// Fuse fuses windows into one document ranking per query with rule m (see
// the package documentation). ndocs bounds the document indices. All
// windows must hold the same number of queries; their K may differ.
func Fuse(m Method, windows []Hits, ndocs int, opt Options) (*Ranking, error) {
	opt, err := opt.withDefaults(m, len(windows))
	if err != nil {
		return nil, err
	}
	nq, err := checkWindows(windows, ndocs)
	if err != nil {
		return nil, err
	}
	if err := checkQueryWeights(opt, nq, len(windows)); err != nil {
		return nil, err
	}
	return run(m, windows, ndocs, opt, nq)
}

// RRF is [Fuse] with [MethodRRF]: every chunk votes for its document.
func RRF(windows []Hits, ndocs int, opt Options) (*Ranking, error) {
	return Fuse(MethodRRF, windows, ndocs, opt)
}

// MaxP is [Fuse] with [MethodMaxP]: each document ranks by its best chunk
// score in any of windows.
func MaxP(windows []Hits, ndocs int, opt Options) (*Ranking, error) {
	return Fuse(MethodMaxP, windows, ndocs, opt)
}

// Single ranks documents by their best chunk score in one window: MaxP over
// w alone. Evidence names window 0.
func Single(w Hits, ndocs int, opt Options) (*Ranking, error) {
	return Fuse(MethodMaxP, []Hits{w}, ndocs, opt)
}

// withDefaults fills in the defaults of opt and checks it for rule m over nw
// windows.
func (opt Options) withDefaults(m Method, nw int) (Options, error) {
	if opt.K == 0 {
		opt.K = 100
	}
	if opt.C == 0 {
		opt.C = 1
	}
	if opt.Workers == 0 {
		opt.Workers = 1
	}
	rule := Rule{Method: m, C: opt.C, RankBase: opt.RankBase, Cap: opt.Cap, Norm: opt.Norm}
	if err := rule.checkRange(); err != nil {
		return opt, err
	}
	switch {
	case opt.K < 0 || opt.Workers < 0:
		return opt, fmt.Errorf("%w: K %d and Workers %d must not be negative", ErrOptions, opt.K, opt.Workers)
	case !m.TakesWeights() && (opt.Weights != nil || opt.QueryWeights != nil):
		return opt, fmt.Errorf("%w: maxp takes no window weights", ErrOptions)
	case opt.Weights != nil && len(opt.Weights) != nw:
		return opt, fmt.Errorf("%w: %d weights for %d windows", ErrOptions, len(opt.Weights), nw)
	case m == MethodLinear && len(opt.Linear) != NumLinear*nw:
		return opt, fmt.Errorf("%w: linear takes %d coefficients per window, %d for %d windows, got %d", ErrOptions, NumLinear, NumLinear*nw, nw, len(opt.Linear))
	}
	for i, v := range opt.Linear {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return opt, fmt.Errorf("%w: linear coefficient %d of window %d is %v", ErrOptions, i%NumLinear, i/NumLinear, v)
		}
	}
	for w, v := range opt.Weights {
		if !ValidWeight(v) {
			return opt, fmt.Errorf("%w: weight of window %d is %v (want finite and >= 0)", ErrOptions, w, v)
		}
	}
	return opt, nil
}

// checkWindows checks the shapes of windows and returns their number of
// queries.
func checkWindows(windows []Hits, ndocs int) (nq int, err error) {
	switch {
	case len(windows) == 0:
		return 0, fmt.Errorf("%w: no windows", ErrShape)
	case ndocs < 0 || ndocs > math.MaxInt32:
		return 0, fmt.Errorf("%w: ndocs %d", ErrShape, ndocs)
	}
	for w, h := range windows {
		if h.K <= 0 || len(h.Docs)%h.K != 0 || len(h.Scores) != len(h.Docs) {
			return 0, fmt.Errorf("%w: window %d: K %d, %d documents, %d scores (want K > 0 and equal lengths, a multiple of K)", ErrShape, w, h.K, len(h.Docs), len(h.Scores))
		}
		if w > 0 && h.NumQueries() != nq {
			return 0, fmt.Errorf("%w: window %d has %d queries, window 0 has %d", ErrShape, w, h.NumQueries(), nq)
		}
		nq = h.NumQueries()
	}
	return nq, nil
}

// checkQueryWeights checks opt.QueryWeights against a batch of nq queries
// over nw windows.
func checkQueryWeights(opt Options, nq, nw int) error {
	qw := opt.QueryWeights
	if qw == nil {
		return nil
	}
	if len(qw) != nq*nw {
		return fmt.Errorf("%w: %d query weights for %d queries x %d windows", ErrShape, len(qw), nq, nw)
	}
	for i, v := range qw {
		q, w := i/nw, i%nw
		if !ValidWeight(v) {
			return fmt.Errorf("%w: query weight of query %d, window %d is %v (want finite and >= 0)", ErrOptions, q, w, v)
		}
		if opt.Weights != nil && math.IsInf(opt.Weights[w]*v, 1) {
			return fmt.Errorf("%w: query %d, window %d: weight %v times query weight %v overflows", ErrOptions, q, w, opt.Weights[w], v)
		}
	}
	return nil
}

// run fuses a checked batch of nq queries: the workers share the queries,
// each fuses and selects its own and counts their evidence, then, once the
// evidence offsets are known, writes the evidence.
func run(m Method, windows []Hits, ndocs int, opt Options, nq int) (*Ranking, error) {
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
