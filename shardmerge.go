package msrag

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/fuse"
)

// tieMargin is how many chunks beyond the k asked for each index returns at
// first. Chunks tied with the k-th one must all be seen for the canonical tie
// order to decide which are kept; when a tie run reaches past what a shard
// returned, those queries are searched again there with twice as many.
const tieMargin = 32

// searchK is the first number of chunks asked of an index for k.
func searchK(k int, ix *faiss.Index) int {
	kk := k + tieMargin
	if n := ix.Ntotal(); int64(kk) > n {
		kk = int(max(n, int64(k)))
	}
	if ix.OnGPU() {
		kk = min(kk, max(k, faiss.MaxGPUK))
	}
	return max(kk, 1)
}

// shardHits is what one shard's index of one window returned for the batch.
type shardHits struct {
	k      int // hits per query
	sh     *shard
	w      *window
	dist   []float32
	labels []int64
	l2     bool // dist are L2 distances: scores are their negatives
}

func (l *shardHits) score(i int) float32 {
	if l.l2 {
		return -l.dist[i]
	}
	return l.dist[i]
}

// mayHoldMore reports whether query q's list is full and its worst score is
// at least s, so the index may hold further chunks of that score.
func (l *shardHits) mayHoldMore(q int, s float32) bool {
	if l.labels[(q+1)*l.k-1] < 0 || int64(l.k) >= l.w.index.Ntotal() {
		return false
	}
	for i := q * l.k; i < (q+1)*l.k; i++ {
		if l.score(i) < s {
			return false
		}
	}
	return true
}

// searchShard searches one shard's window for k chunks per query. The scores
// of a flat index are rescored (faiss.Index.Rescore), so that they do not
// depend on the batch or on how the corpus was split into shards.
func searchShard(w *window, vecs []float32, k int) (dist []float32, labels []int64, err error) {
	if w.index.Ntotal() == 0 { // an empty shard (which may not even be trained)
		nq := len(vecs) / w.index.Dim()
		labels = make([]int64, nq*k)
		for i := range labels {
			labels[i] = -1
		}
		return make([]float32, nq*k), labels, nil
	}
	dist, labels, err = w.index.Search(vecs, k)
	if err == nil && w.index.Flat() {
		dist, err = w.index.Rescore(vecs, labels, k)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("msrag: window %s: %w", w.spec.Name(), err)
	}
	return dist, labels, nil
}

type chunkHit struct {
	doc        int32
	score      float32
	start, end int64
	shard, row int32 // a lexical hit's shard and row there
}

// mergeShards writes, for every query, the k best chunks over all shards into
// h, start and end: best score first, equal scores by document index and then
// byte start, so the result depends neither on FAISS's order among ties nor on
// how the corpus was sharded. A missing hit has document -1. While a tie at the
// k-th place may run past a shard's list, the queries concerned are searched
// again there with twice as many. With flat indices the scores are canonical
// (searchShard), so the ranking is the same for one index and for shards, and
// whatever the batch.
func mergeShards(lists []shardHits, vecs []float32, nq, k int, h fuse.Hits, start, end []int64) error {
	var buf []chunkHit
	for {
		moreQ := make([][]int, len(lists))
		for q := range nq {
			buf = collect(buf[:0], lists, q)
			if len(buf) >= k {
				for s := range lists {
					if lists[s].mayHoldMore(q, buf[k-1].score) {
						moreQ[s] = append(moreQ[s], q)
					}
				}
			}
			o := q * k
			for r := range k {
				i := o + r
				if r < len(buf) {
					c := buf[r]
					h.Docs[i], h.Scores[i], start[i], end[i] = c.doc, c.score, c.start, c.end
				} else {
					h.Docs[i], h.Scores[i], start[i], end[i] = -1, 0, 0, 0
				}
			}
		}
		again := false
		for s := range lists {
			grew, err := lists[s].searchAgain(vecs, nq, moreQ[s])
			if err != nil {
				return err
			}
			again = again || grew
		}
		if !again {
			return nil
		}
	}
}

// collect appends query q's chunks of every shard to buf, in the canonical
// order: score descending, then document index, then byte start.
func collect(buf []chunkHit, lists []shardHits, q int) []chunkHit {
	for s := range lists {
		l := &lists[s]
		ct := l.w.chunks
		for i := q * l.k; i < (q+1)*l.k; i++ {
			lab := l.labels[i]
			if lab < 0 {
				break
			}
			buf = append(buf, chunkHit{doc: l.sh.gidx[ct.Doc[lab]], score: l.score(i), start: ct.ByteStart[lab], end: ct.ByteEnd[lab]})
		}
	}
	slices.SortFunc(buf, func(a, b chunkHit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.doc, b.doc), cmp.Compare(a.start, b.start))
	})
	return buf
}

// searchAgain searches the queries qs of this shard's list again with twice
// as many chunks per query (as far as the index holds), and reports whether
// the list grew.
func (l *shardHits) searchAgain(vecs []float32, nq int, qs []int) (bool, error) {
	n := min(int64(2*l.k), l.w.index.Ntotal())
	if l.w.index.OnGPU() {
		n = min(n, faiss.MaxGPUK)
	}
	if len(qs) == 0 || int(n) <= l.k {
		return false, nil
	}
	nk := int(n)
	d := len(vecs) / nq
	sub := make([]float32, 0, len(qs)*d)
	for _, q := range qs {
		sub = append(sub, vecs[q*d:(q+1)*d]...)
	}
	sd, sl, err := searchShard(l.w, sub, nk)
	if err != nil {
		return false, err
	}
	dist := make([]float32, nq*nk)
	labels := make([]int64, nq*nk)
	for i := range labels {
		labels[i] = -1
	}
	for q := range nq {
		copy(dist[q*nk:], l.dist[q*l.k:(q+1)*l.k])
		copy(labels[q*nk:], l.labels[q*l.k:(q+1)*l.k])
	}
	for i, q := range qs {
		copy(dist[q*nk:(q+1)*nk], sd[i*nk:(i+1)*nk])
		copy(labels[q*nk:(q+1)*nk], sl[i*nk:(i+1)*nk])
	}
	l.k, l.dist, l.labels = nk, dist, labels
	return true, nil
}
