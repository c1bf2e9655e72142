package fuse

import (
	"fmt"
	"math"
)

// fuser fuses a range of queries with its own scratch.
type fuser struct {
	windows []Hits
	ndocs   int
	opt     Options
	m       Method
	out     *Ranking

	acc     []float64 // score of each document touched by the current query
	stamp   []uint32  // stamp[d] == gen when acc[d] belongs to the current query
	gen     uint32
	wstamp  []uint32 // wstamp[d] == wgen when d was met in the current window; not for MaxP
	wgen    uint32
	seen    []int32   // MethodRRF with Cap: chunks of d met in the current window, valid with wstamp
	nwin    []int32   // CombSUM, CombMNZ: windows that retrieved d, valid with stamp
	votes   []float64 // Linear: the chunk votes of d in the current window, valid with wstamp
	first   []int32   // CombSUM, CombMNZ: positions of the documents' first hits in the current window
	slot    []int32   // output slot of each selected document, -1 otherwise
	touched []int32   // documents touched by the current query
	heap    []cand    // top-k candidates, worst at the root
	evCount []int32   // evidence count per slot of the current query
	pos     []int32   // next evidence index per slot of the current query
}

// newFuser allocates the scratch rule m needs over ndocs documents.
func newFuser(windows []Hits, ndocs int, opt Options, m Method, out *Ranking) *fuser {
	maxK, sumK := 0, 0
	for _, h := range windows {
		maxK, sumK = max(maxK, h.K), sumK+h.K
	}
	f := &fuser{
		windows: windows, ndocs: ndocs, opt: opt, m: m, out: out,
		acc:     make([]float64, ndocs),
		stamp:   make([]uint32, ndocs),
		slot:    make([]int32, ndocs),
		touched: make([]int32, 0, min(ndocs, sumK)),
		heap:    make([]cand, 0, opt.K),
		evCount: make([]int32, opt.K),
		pos:     make([]int32, opt.K),
	}
	for i := range f.slot {
		f.slot[i] = -1
	}
	if m != MethodMaxP {
		f.wstamp = make([]uint32, ndocs)
	}
	if m == MethodRRF && opt.Cap > 0 {
		f.seen = make([]int32, ndocs)
	}
	if m == MethodCombSUM || m == MethodCombMNZ || m == MethodLinear {
		f.nwin = make([]int32, ndocs)
		f.first = make([]int32, 0, maxK)
	}
	if m == MethodLinear {
		f.votes = make([]float64, ndocs)
	}
	return f
}

func (f *fuser) run(lo, hi int) error {
	for q := lo; q < hi; q++ {
		if err := f.query(q); err != nil {
			return err
		}
	}
	return nil
}

// row returns query q's hits in h.
func (h Hits) row(q int) ([]int32, []float32) {
	return h.Docs[q*h.K : (q+1)*h.K], h.Scores[q*h.K : (q+1)*h.K]
}

// query checks, scores, selects and records query q.
func (f *fuser) query(q int) error {
	if err := f.check(q); err != nil {
		return err
	}
	f.gen++
	if f.gen == 0 { // wrapped: old stamps could collide
		clear(f.stamp)
		f.gen = 1
	}
	f.touched = f.touched[:0]
	switch f.m {
	case MethodRRF:
		f.rrf(q)
	case MethodDocRRF:
		f.docRRF(q)
	case MethodCombSUM, MethodCombMNZ:
		f.comb(q)
	case MethodLinear:
		f.linear(q)
	default:
		f.maxP(q)
	}
	f.selectTop()
	f.record(q)
	return nil
}

// check returns an error for the first bad hit of query q, in window then
// position order: a document outside [-1, ndocs), a NaN score where the rule
// compares scores (MaxP, CombSUM, CombMNZ, Linear) or an infinite one where
// it sums them (CombSUM, CombMNZ, Linear).
func (f *fuser) check(q int) error {
	summed := f.m == MethodCombSUM || f.m == MethodCombMNZ || f.m == MethodLinear
	scored := f.m == MethodMaxP || summed
	for w, h := range f.windows {
		docs, scores := h.row(q)
		for j, d := range docs {
			if uint32(d+1) > uint32(f.ndocs) { // d+1 outside [0, ndocs]
				return fmt.Errorf("%w: window %d, query %d, position %d: document %d (want -1 or [0, %d))", ErrDocRange, w, q, j, d, f.ndocs)
			}
			if d < 0 || !scored {
				continue
			}
			if s := scores[j]; s != s || (summed && (s > math.MaxFloat32 || s < -math.MaxFloat32)) {
				return fmt.Errorf("%w: window %d, query %d, position %d: document %d has score %v", ErrScore, w, q, j, d, s)
			}
		}
	}
	return nil
}

// weight returns query q's weight of window w.
func (f *fuser) weight(q, w int) float64 {
	v := 1.0
	if f.opt.Weights != nil {
		v = f.opt.Weights[w]
	}
	if f.opt.QueryWeights != nil {
		v *= f.opt.QueryWeights[q*len(f.windows)+w]
	}
	return v
}

// add adds v to document d's score, touching d if the query had not yet.
func (f *fuser) add(d int32, v float64) {
	if f.stamp[d] != f.gen {
		f.stamp[d] = f.gen
		f.acc[d] = v
		f.touched = append(f.touched, d)
	} else {
		f.acc[d] += v
	}
}

// nextWindow starts a window: no document has been met in it yet.
func (f *fuser) nextWindow() {
	f.wgen++
	if f.wgen == 0 {
		clear(f.wstamp)
		f.wgen = 1
	}
}

// firstInWindow reports whether this is the first hit of d in the current
// window, and marks d as met.
func (f *fuser) firstInWindow(d int32) bool {
	if f.wstamp[d] == f.wgen {
		return false
	}
	f.wstamp[d] = f.wgen
	return true
}

// underCap counts a chunk of d in the current window and reports whether it
// is among d's first Options.Cap chunks there.
func (f *fuser) underCap(d int32) bool {
	if f.wstamp[d] != f.wgen {
		f.wstamp[d] = f.wgen
		f.seen[d] = 0
	}
	f.seen[d]++
	return int(f.seen[d]) <= f.opt.Cap
}

// cand is a document and its fused score, kept together so that heap
// comparisons do not reach into the accumulator.
type cand struct {
	s float64
	d int32
}

// better reports whether a ranks before b: higher score, then lower document.
func better(a, b cand) bool {
	return a.s > b.s || (a.s == b.s && a.d < b.d)
}

// selectTop leaves in f.heap the best K touched documents, best first.
func (f *fuser) selectTop() {
	h := f.heap[:0]
	k := f.opt.K
	for _, d := range f.touched {
		c := cand{f.acc[d], d}
		if len(h) < k {
			h = append(h, c)
			up(h, len(h)-1)
		} else if k > 0 && better(c, h[0]) {
			h[0] = c
			down(h, 0, len(h))
		}
	}
	// Heap sort: move the worst to the end repeatedly, leaving best first.
	for n := len(h) - 1; n > 0; n-- {
		h[0], h[n] = h[n], h[0]
		down(h, 0, n)
	}
	f.heap = h
}

// up and down keep h a heap with the worst candidate at the root.
func up(h []cand, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func down(h []cand, i, n int) {
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && better(h[c], h[c+1]) {
			c++ // the worse child
		}
		if !better(h[i], h[c]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// record writes query q's selected documents and scores, and the number of
// evidence entries of each slot into EvStart[slot+1]; fuse turns the counts
// into offsets before [fuser.fill] writes the entries.
func (f *fuser) record(q int) {
	k := f.opt.K
	base := q * k
	docs := f.out.Docs[base : base+k]
	scores := f.out.Scores[base : base+k]
	for r := range docs {
		docs[r], scores[r] = -1, 0
		f.evCount[r] = 0
	}
	for r, c := range f.heap {
		docs[r], scores[r] = c.d, c.s
		f.slot[c.d] = int32(r)
	}
	f.scanEvidence(q, base, false)
	copy(f.out.EvStart[base+1:base+k+1], f.evCount)
	for _, c := range f.heap {
		f.slot[c.d] = -1
	}
}

// fill writes the evidence of queries [lo, hi) at the offsets in EvStart.
func (f *fuser) fill(lo, hi int) {
	k := f.opt.K
	for q := lo; q < hi; q++ {
		base := q * k
		docs, _ := f.out.Query(q)
		for r, d := range docs {
			f.slot[d] = int32(r)
			f.pos[r] = f.out.EvStart[base+r]
		}
		f.scanEvidence(q, base, true)
		for _, d := range docs {
			f.slot[d] = -1
		}
	}
}

// scanEvidence walks query q's hits and, for each chunk behind a selected
// document, counts it into f.evCount (fill false) or writes it at
// f.out.Evidence[f.pos[slot]] (fill true). Windows of weight 0 are skipped,
// as in scoring; [fuser.isEvidence] says which chunks count.
func (f *fuser) scanEvidence(q, base int, fill bool) {
	every := f.m == MethodRRF && f.opt.Cap == 0 // every chunk of a selected document
	for w, h := range f.windows {
		if f.m != MethodMaxP && f.weight(q, w) <= 0 {
			continue
		}
		f.nextWindow()
		docs, scores := h.row(q)
		rank := int32(0)
		for j, d := range docs {
			if d < 0 {
				continue
			}
			rank++
			r := f.slot[d]
			if r < 0 || (!every && !f.isEvidence(d, r, scores[j], base, fill)) {
				continue
			}
			if !fill {
				f.evCount[r]++
				continue
			}
			f.out.Evidence[f.pos[r]] = Evidence{Window: int32(w), Pos: int32(j), Rank: rank - 1, Score: scores[j]}
			f.pos[r]++
		}
	}
}

// isEvidence reports whether the current hit, a chunk of score s of the
// document d selected in slot r, is evidence: for RRF every chunk that voted
// (the first Cap per window with Cap), for MaxP the first chunk with the
// document's maximal score, for the document-level rules the document's
// first hit in each window.
func (f *fuser) isEvidence(d, r int32, s float32, base int, fill bool) bool {
	switch f.m {
	case MethodRRF:
		return f.opt.Cap == 0 || f.underCap(d)
	case MethodMaxP:
		taken := f.evCount[r] > 0
		if fill {
			taken = f.pos[r] > f.out.EvStart[base+int(r)]
		}
		return !taken && float64(s) == f.out.Scores[base+int(r)]
	}
	return f.firstInWindow(d)
}
