package msrag

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/onnx"
)

// SearchOptions says how to search. The zero value searches every window for its
// top 100 chunks and fuses them with RRF (c = 1, ranks from 0) into 10 documents.
type SearchOptions struct {
	// K is the number of documents returned per query; default 10.
	K int
	// WindowK is the number of chunks each window's index returns; default 100.
	WindowK int
	// Fusion is "rrf" (default), "maxp" (best chunk score over the windows),
	// "w=SIZE" (one window alone, its chunks collapsed to documents by their
	// best score), or "full" (documents embedded whole and truncated, for an
	// index built with Config.Full).
	Fusion string
	// Windows restricts rrf and maxp to these window sizes; default all (the
	// full-document window is never among them).
	Windows []int
	// RRFC is RRF's constant c; default 1.
	RRFC float64
	// RankBase is the rank of a window's top chunk in RRF; default 0 (c = 60
	// with RankBase 1 is classic RRF).
	RankBase int
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.K <= 0 {
		o.K = 10
	}
	if o.WindowK <= 0 {
		o.WindowK = 100
	}
	if o.Fusion == "" {
		o.Fusion = "rrf"
	}
	return o
}

// Hit is one document in a query's fused ranking.
type Hit struct {
	DocID    string
	Doc      int     // document index in the index
	Score    float64 // fused score
	Rank     int     // from 1
	Evidence []Evidence
}

// Evidence is a chunk that voted for a document.
type Evidence struct {
	Window     int     // window size
	ChunkRank  int     // the chunk's rank in that window's list, from 1
	ChunkScore float32 // its similarity (inner product; minus the distance for L2)
	Start, End int64   // its byte span in the document's text (title + " " + text)
}

// ChunkHits is what every window's index returned for a batch of queries, with
// chunks already mapped to documents: the input of fusion. One ChunkHits can be
// fused many ways (eval does so) without searching again.
type ChunkHits struct {
	NQ      int
	Windows []int       // window sizes, as in the index
	Full    []bool      // Full[i]: window i is the full-document window
	Hits    []fuse.Hits // per window; Docs are document indices, -1 for none
	// Start and End are the byte spans of the chunks, parallel to Hits[w].Docs.
	Start, End [][]int64
}

// Search embeds the queries once, searches every window and fuses the results.
func (ix *Index) Search(ctx context.Context, queries []string, opts SearchOptions) ([][]Hit, error) {
	opts = opts.withDefaults()
	ch, err := ix.SearchChunks(ctx, queries, opts.WindowK)
	if err != nil {
		return nil, err
	}
	return ix.Fuse(ch, opts)
}

// EmbedQueries embeds a batch of queries with the index's model (query role).
func (ix *Index) EmbedQueries(ctx context.Context, queries []string) ([]float32, error) {
	for i, q := range queries {
		if strings.TrimSpace(q) == "" {
			return nil, fmt.Errorf("msrag: query %d is empty", i)
		}
	}
	return ix.emb.Embed(ctx, queries, onnx.Query)
}

// SearchChunks embeds the queries and returns each window's top windowK chunks.
func (ix *Index) SearchChunks(ctx context.Context, queries []string, windowK int) (*ChunkHits, error) {
	if len(queries) == 0 {
		return ix.newChunkHits(0), nil
	}
	vecs, err := ix.EmbedQueries(ctx, queries)
	if err != nil {
		return nil, err
	}
	return ix.SearchVectors(ctx, vecs, windowK)
}

func (ix *Index) onGPU() bool {
	return len(ix.shards) > 0 && len(ix.shards[0].windows) > 0 && ix.shards[0].windows[0].index.OnGPU()
}

func (ix *Index) newChunkHits(nq int) *ChunkHits {
	nw := len(ix.man.Windows)
	ch := &ChunkHits{NQ: nq, Windows: make([]int, nw), Full: make([]bool, nw), Hits: make([]fuse.Hits, nw),
		Start: make([][]int64, nw), End: make([][]int64, nw)}
	for i, w := range ix.man.Windows {
		ch.Windows[i], ch.Full[i] = w.Size, w.Full
	}
	return ch
}

// SearchVectors searches every window (in parallel) with already embedded
// queries and maps the chunks to documents. With several shards, each window's
// lists are merged by score, best first, ties kept in shard order.
func (ix *Index) SearchVectors(ctx context.Context, vecs []float32, windowK int) (*ChunkHits, error) {
	if windowK <= 0 {
		windowK = 100
	}
	dims := ix.man.Model.Dims
	if len(vecs)%dims != 0 {
		return nil, fmt.Errorf("msrag: %d floats is not a whole number of %d-dim vectors", len(vecs), dims)
	}
	nq := len(vecs) / dims
	if windowK > faiss.MaxGPUK && ix.onGPU() {
		return nil, fmt.Errorf("msrag: window k %d is more than FAISS on GPUs returns (%d); search with a smaller window k", windowK, faiss.MaxGPUK)
	}
	nw := len(ix.man.Windows)
	out := ix.newChunkHits(nq)
	l2 := ix.man.Metric == faiss.L2.String()
	g, gctx := errgroup.WithContext(ctx)
	for wi := range nw {
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			lists := make([]shardHits, len(ix.shards))
			for si, sh := range ix.shards {
				w := sh.windows[wi]
				k := searchK(windowK, w.index)
				dist, labels, err := w.index.Search(vecs, k)
				if err != nil {
					return fmt.Errorf("msrag: window %d: %w", w.size, err)
				}
				lists[si] = shardHits{k: k, sh: sh, w: w, dist: dist, labels: labels, l2: l2}
			}
			h := fuse.Hits{K: windowK, Docs: make([]int32, nq*windowK), Scores: make([]float32, nq*windowK)}
			start, end := make([]int64, nq*windowK), make([]int64, nq*windowK)
			if err := mergeShards(lists, vecs, nq, windowK, h, start, end); err != nil {
				return err
			}
			out.Hits[wi], out.Start[wi], out.End[wi] = h, start, end
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// tieMargin is how many chunks beyond the k asked for each index returns at
// first. Chunks tied with the k-th one must all be seen for the canonical tie
// order to decide which are kept; when a tie run reaches past what a shard
// returned, those queries are searched again in that shard with twice as many.
const tieMargin = 32

// faissBLASThreshold is FAISS's distance_compute_blas_threshold: from this many
// queries on, exact search computes distances with BLAS.
const faissBLASThreshold = 20

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

// mayHoldMore reports whether query q's list is full and ends on score s, so
// the index may hold further chunks of that score.
func (l *shardHits) mayHoldMore(q int, s float32) bool {
	last := (q+1)*l.k - 1
	return l.labels[last] >= 0 && int64(l.k) < l.w.index.Ntotal() && l.score(last) >= s
}

// mergeShards writes, for every query, the k best chunks over all shards into
// h, start and end: best score first, equal scores by document index and then
// byte start, so the result depends neither on FAISS's order among ties nor on
// how the corpus was sharded. A missing hit has document -1. While a tie at the
// k-th place may run past a shard's list, the queries concerned are searched
// again there with twice as many.
func mergeShards(lists []shardHits, vecs []float32, nq, k int, h fuse.Hits, start, end []int64) error {
	var buf []chunkHit
	for {
		more := make([]bool, len(lists))
		moreQ := make([][]int, len(lists))
		for q := range nq {
			buf = buf[:0]
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
				switch {
				case a.score != b.score:
					return cmp.Compare(b.score, a.score)
				case a.doc != b.doc:
					return cmp.Compare(a.doc, b.doc)
				}
				return cmp.Compare(a.start, b.start)
			})
			if len(buf) >= k {
				for s := range lists {
					if lists[s].mayHoldMore(q, buf[k-1].score) {
						more[s] = true
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
			l := &lists[s]
			n := min(int64(2*l.k), l.w.index.Ntotal())
			if l.w.index.OnGPU() {
				n = min(n, faiss.MaxGPUK)
			}
			if !more[s] || int(n) <= l.k {
				continue
			}
			// Search again only the queries whose tie may run on. FAISS
			// computes distances one way for fewer than 20 queries and with
			// BLAS from 20 on: pad the re-search to the kind of call the
			// batch had, so its scores equal the batch's to the last bit.
			dims := len(vecs) / nq
			qs := moreQ[s]
			rows := len(qs)
			if nq >= faissBLASThreshold {
				rows = max(rows, faissBLASThreshold)
			}
			sub := make([]float32, 0, rows*dims)
			for i := range rows {
				q := qs[i%len(qs)]
				sub = append(sub, vecs[q*dims:(q+1)*dims]...)
			}
			sd, sl, err := l.w.index.Search(sub, int(n))
			if err != nil {
				return fmt.Errorf("msrag: window %d: %w", l.w.size, err)
			}
			nk := int(n)
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
			again = true
		}
		if !again {
			return nil
		}
	}
}

type chunkHit struct {
	doc        int32
	score      float32
	start, end int64
}

// Fuse turns per-window chunk hits into document rankings as opts.Fusion says.
func (ix *Index) Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error) {
	opts = opts.withDefaults()
	sel, method, err := selectWindows(ch, opts)
	if err != nil {
		return nil, err
	}
	hits := make([]fuse.Hits, len(sel))
	for i, wi := range sel {
		hits[i] = ch.Hits[wi]
	}
	fo := fuse.Options{K: opts.K, C: opts.RRFC, RankBase: opts.RankBase, Workers: 2}
	var rk *fuse.Ranking
	switch method {
	case "rrf":
		rk, err = fuse.RRF(hits, ix.NumDocs(), fo)
	case "maxp":
		rk, err = fuse.MaxP(hits, ix.NumDocs(), fo)
	default:
		rk, err = fuse.Single(hits[0], ix.NumDocs(), fo)
	}
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	out := make([][]Hit, ch.NQ)
	for q := range ch.NQ {
		docs, scores := rk.Query(q)
		row := make([]Hit, 0, len(docs))
		for r, d := range docs {
			if d < 0 {
				break
			}
			ev := rk.EvidenceOf(q, r)
			evs := make([]Evidence, len(ev))
			for j, e := range ev {
				wi := sel[e.Window]
				p := q*ch.Hits[wi].K + int(e.Pos)
				evs[j] = Evidence{Window: ch.Windows[wi], ChunkRank: int(e.Rank) + 1, ChunkScore: e.Score,
					Start: ch.Start[wi][p], End: ch.End[wi][p]}
			}
			row = append(row, Hit{DocID: ix.DocID(int(d)), Doc: int(d), Score: scores[r], Rank: r + 1, Evidence: evs})
		}
		out[q] = row
	}
	return out, nil
}

// selectWindows returns the positions of the windows a fusion uses and the
// fusion method ("rrf", "maxp" or "single").
func selectWindows(ch *ChunkHits, opts SearchOptions) ([]int, string, error) {
	var sizes []int
	for i, w := range ch.Windows {
		if !ch.Full[i] {
			sizes = append(sizes, w)
		}
	}
	find := func(size int) (int, error) {
		for i, w := range ch.Windows {
			if w == size && !ch.Full[i] {
				return i, nil
			}
		}
		return 0, fmt.Errorf("msrag: the index has no window %d (it has %v)", size, sizes)
	}
	f := strings.ToLower(strings.TrimSpace(opts.Fusion))
	switch {
	case f == "rrf" || f == "maxp":
		var sel []int
		if len(opts.Windows) == 0 {
			for i := range ch.Windows {
				if !ch.Full[i] {
					sel = append(sel, i)
				}
			}
			return sel, f, nil
		}
		for _, s := range opts.Windows {
			i, err := find(s)
			if err != nil {
				return nil, "", err
			}
			sel = append(sel, i)
		}
		return sel, f, nil
	case f == "full":
		for i := range ch.Windows {
			if ch.Full[i] {
				return []int{i}, "single", nil
			}
		}
		return nil, "", fmt.Errorf("msrag: fusion full: the index has no full-document window (build it with --full)")
	case strings.HasPrefix(f, "w="):
		size, err := strconv.Atoi(f[2:])
		if err != nil {
			return nil, "", fmt.Errorf("msrag: fusion %q: want w=SIZE", opts.Fusion)
		}
		i, err := find(size)
		if err != nil {
			return nil, "", err
		}
		return []int{i}, "single", nil
	}
	return nil, "", fmt.Errorf("msrag: unknown fusion %q (want rrf, maxp, w=SIZE or full)", opts.Fusion)
}
