package fuse

import "math"

// The scoring of each rule for one query. Each adds into f.acc window by
// window, and within a window in list order, touching the documents it
// scores; see the package documentation for the formulas. A window of
// weight 0 for the query is skipped.

// rrf adds the vote of every chunk, or with Cap of each document's first
// Cap chunks per window.
func (f *fuser) rrf(q int) {
	base, c, capped := f.opt.RankBase, f.opt.C, f.opt.Cap > 0
	for w, h := range f.windows {
		wt := f.weight(q, w)
		if wt <= 0 {
			continue
		}
		f.nextWindow()
		docs, _ := h.row(q)
		rank := 0
		for _, d := range docs {
			if d < 0 {
				continue
			}
			rank++
			if capped && !f.underCap(d) {
				continue // over the cap: the chunk keeps its rank but does not vote
			}
			f.add(d, wt/(float64(base+rank-1)+c))
		}
	}
}

// docRRF adds, per window, the vote of each document at its rank among the
// window's distinct documents, in order of their first hits.
func (f *fuser) docRRF(q int) {
	base, c := f.opt.RankBase, f.opt.C
	for w, h := range f.windows {
		wt := f.weight(q, w)
		if wt <= 0 {
			continue
		}
		f.nextWindow()
		docs, _ := h.row(q)
		drank := 0
		for _, d := range docs {
			if d < 0 || !f.firstInWindow(d) {
				continue
			}
			f.add(d, wt/(float64(base+drank)+c))
			drank++
		}
	}
}

// maxP keeps each document's best chunk score.
func (f *fuser) maxP(q int) {
	for _, h := range f.windows {
		docs, scores := h.row(q)
		for j, d := range docs {
			if d < 0 {
				continue
			}
			v := float64(scores[j])
			if f.stamp[d] != f.gen {
				f.stamp[d] = f.gen
				f.acc[d] = v
				f.touched = append(f.touched, d)
			} else if v > f.acc[d] {
				f.acc[d] = v
			}
		}
	}
}

// comb adds each window's weighted, normalised document scores; a document
// the window missed gets the window's floor, unless the window has no hits
// for the query. CombMNZ then multiplies by the number of windows that
// retrieved the document. The explicit float64 conversions keep the
// products rounded before they are added (no fused multiply-add), so that
// sums are reproducible across platforms.
func (f *fuser) comb(q int) {
	f.touchRetrieved(q)
	for w, h := range f.windows {
		wt := f.weight(q, w)
		if wt <= 0 {
			continue
		}
		st := f.scanWindow(q, w, f.opt.Norm)
		if len(f.first) == 0 {
			continue // no hits: the window says nothing about any document
		}
		docs, scores := h.row(q)
		for _, j := range f.first {
			d := docs[j]
			f.acc[d] += float64(wt * st.apply(float64(scores[j])))
			f.nwin[d]++
		}
		floor := float64(wt * st.floor)
		for _, d := range f.touched {
			if f.wstamp[d] != f.wgen { // missed by this window
				f.acc[d] += floor
			}
		}
	}
	if f.m == MethodCombMNZ {
		for _, d := range f.touched {
			f.acc[d] *= float64(f.nwin[d])
		}
	}
}

// touchRetrieved touches, with a zero score, every document that a window
// of positive weight retrieved for query q, so that each window can then add
// its floor to the touched documents it missed.
func (f *fuser) touchRetrieved(q int) {
	for w, h := range f.windows {
		if f.weight(q, w) <= 0 {
			continue
		}
		docs, _ := h.row(q)
		for _, d := range docs {
			if d >= 0 && f.stamp[d] != f.gen {
				f.stamp[d] = f.gen
				f.acc[d], f.nwin[d] = 0, 0
				f.touched = append(f.touched, d)
			}
		}
	}
}

// winStats normalises the document scores of one window for one query.
type winStats struct {
	norm      Norm
	lo, span  float64 // the lowest score, and the highest minus the lowest
	mean, std float64 // NormZScore, when span > 0
	floor     float64 // the normalised score of a document the window missed
}

// apply returns the normalised value of a retrieved document's score x.
func (s *winStats) apply(x float64) float64 {
	switch s.norm {
	case NormMinMax:
		if s.span == 0 {
			return 1
		}
		return (x - s.lo) / s.span
	case NormZScore:
		if s.span == 0 {
			return 0
		}
		return (x - s.mean) / s.std
	}
	return x
}

// scanWindow starts window w for query q: it marks the documents the window
// retrieved, collects into f.first the positions of their first hits in
// list order, and returns the statistics of those hits' scores for
// normalisation norm. Sums run in list order.
func (f *fuser) scanWindow(q, w int, norm Norm) winStats {
	f.nextWindow()
	f.first = f.first[:0]
	docs, scores := f.windows[w].row(q)
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for j, d := range docs {
		if d < 0 || !f.firstInWindow(d) {
			continue
		}
		f.first = append(f.first, int32(j))
		s := float64(scores[j])
		lo, hi, sum = min(lo, s), max(hi, s), sum+s
	}
	st := winStats{norm: norm, lo: lo, span: hi - lo}
	switch {
	case st.norm == NormNone:
		st.floor = lo
	case st.norm == NormZScore && st.span > 0:
		n := float64(len(f.first))
		st.mean = sum / n
		sq := 0.0
		for _, j := range f.first {
			dx := float64(scores[j]) - st.mean
			sq += float64(dx * dx)
		}
		st.std = math.Sqrt(sq / n)
		st.floor = st.apply(lo)
	}
	// NormMinMax: the floor is 0, even when span is 0 and the retrieved
	// documents get 1. NormZScore with span 0: everything is 0.
	return st
}

// linear adds, per window with hits, weight times the linear combination of
// each retrieved document's z-score, 1/(docrank+1) and chunk votes; a
// document the window missed gets weight times the score coefficient times
// the window's z floor. Within a window the votes are summed in list order
// first; a document's term is then ((a*z + b/(docrank+1)) + c*votes), each
// product rounded before it is added.
func (f *fuser) linear(q int) {
	f.touchRetrieved(q)
	for w, h := range f.windows {
		wt := f.weight(q, w)
		if wt <= 0 {
			continue
		}
		st := f.scanWindow(q, w, NormZScore)
		if len(f.first) == 0 {
			continue
		}
		th := f.opt.Linear[NumLinear*w : NumLinear*(w+1)]
		docs, scores := h.row(q)
		f.sumVotes(docs)
		for dr, j := range f.first {
			d := docs[j]
			t := float64(th[LinearScore] * st.apply(float64(scores[j])))
			t += float64(th[LinearRank] / float64(dr+1))
			t += float64(th[LinearVotes] * f.votes[d])
			f.acc[d] += float64(wt * t)
		}
		floor := float64(wt * float64(th[LinearScore]*st.floor))
		for _, d := range f.touched {
			if f.wstamp[d] != f.wgen {
				f.acc[d] += floor
			}
		}
	}
}

// sumVotes sums, for each document of the current window (marked by
// scanWindow), 1/(rank+1) over its chunks, rank counting the window's
// non-missing hits from 0, in list order.
func (f *fuser) sumVotes(docs []int32) {
	for _, j := range f.first {
		f.votes[docs[j]] = 0
	}
	rank := 0
	for _, d := range docs {
		if d < 0 {
			continue
		}
		f.votes[d] += 1 / float64(rank+1)
		rank++
	}
}
