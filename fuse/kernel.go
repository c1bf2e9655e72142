package fuse

import "fmt"

// fuser fuses a range of queries with its own scratch.
type fuser struct {
	windows []Hits
	ndocs   int
	opt     Options
	m       method
	out     *Ranking

	acc     []float64 // score of each document touched by the current query
	stamp   []uint32  // stamp[d] == gen when acc[d] belongs to the current query
	gen     uint32
	slot    []int32 // output slot of each selected document, -1 otherwise
	touched []int32 // documents touched by the current query
	heap    []cand  // top-k candidates, worst at the root
	evCount []int32 // evidence count per slot of the current query
	pos     []int32 // next evidence index per slot of the current query
}

func newFuser(windows []Hits, ndocs int, opt Options, m method, out *Ranking) *fuser {
	f := &fuser{
		windows: windows, ndocs: ndocs, opt: opt, m: m, out: out,
		acc:     make([]float64, ndocs),
		stamp:   make([]uint32, ndocs),
		slot:    make([]int32, ndocs),
		heap:    make([]cand, 0, opt.K),
		evCount: make([]int32, opt.K),
		pos:     make([]int32, opt.K),
	}
	for i := range f.slot {
		f.slot[i] = -1
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

// query accumulates, selects and records query q.
func (f *fuser) query(q int) error {
	f.gen++
	if f.gen == 0 { // wrapped: old stamps could collide
		clear(f.stamp)
		f.gen = 1
	}
	f.touched = f.touched[:0]
	for w, h := range f.windows {
		docs := h.Docs[q*h.K : (q+1)*h.K]
		scores := h.Scores[q*h.K : (q+1)*h.K]
		rank := 0
		for j, d := range docs {
			if d < 0 {
				if d != -1 {
					return fmt.Errorf("%w: window %d, query %d, position %d: document %d (want -1 or [0, %d))", ErrDocRange, w, q, j, d, f.ndocs)
				}
				continue
			}
			if int(d) >= f.ndocs {
				return fmt.Errorf("%w: window %d, query %d, position %d: document %d (want -1 or [0, %d))", ErrDocRange, w, q, j, d, f.ndocs)
			}
			var v float64
			if f.m == methodRRF {
				v = 1 / (float64(f.opt.RankBase+rank) + f.opt.C)
			} else {
				s := scores[j]
				if s != s {
					return fmt.Errorf("%w: window %d, query %d, position %d: document %d has score NaN", ErrScore, w, q, j, d)
				}
				v = float64(s)
			}
			rank++
			if f.stamp[d] != f.gen {
				f.stamp[d] = f.gen
				f.acc[d] = v
				f.touched = append(f.touched, d)
			} else if f.m == methodRRF {
				f.acc[d] += v
			} else if v > f.acc[d] {
				f.acc[d] = v
			}
		}
	}
	f.selectTop()
	f.record(q)
	return nil
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
// f.out.Evidence[f.pos[slot]] (fill true). For MaxP only the first chunk with
// the document's maximal score is taken.
func (f *fuser) scanEvidence(q, base int, fill bool) {
	for w, h := range f.windows {
		docs := h.Docs[q*h.K : (q+1)*h.K]
		scores := h.Scores[q*h.K : (q+1)*h.K]
		rank := int32(0)
		for j, d := range docs {
			if d < 0 {
				continue
			}
			rank++
			r := f.slot[d]
			if r < 0 {
				continue
			}
			if f.m == methodMaxP {
				taken := f.evCount[r] > 0
				if fill {
					taken = f.pos[r] > f.out.EvStart[base+int(r)]
				}
				if taken || float64(scores[j]) != f.out.Scores[base+int(r)] {
					continue
				}
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
