package msrag

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
)

// ChunkHits is what every channel of an index returned for a batch of
// queries, with rows already mapped to documents: the input of fusion. One
// ChunkHits can be fused many ways without searching again.
type ChunkHits struct {
	NQ     int
	Layout Layout      // the index's channels
	Hits   []fuse.Hits // per channel; Docs are document indices, -1 for none
	// Start and End are the byte spans of the chunks, parallel to Hits[w].Docs.
	Start, End [][]int64
	// Queries holds the query vectors searched (NQ rows of Dims), which a
	// learned router reads.
	Queries []float32
	Dims    int

	// rows and shards are, per channel, where each hit came from: its row
	// in the channel of its shard. q is the batch's queries. Both explain
	// the hits (the query terms a chunk holds); a ChunkHits put together from others has
	// neither. terms, when set, are those explanations already made (the
	// files of a scatter-gather search carry them), per channel and hit.
	rows, shards [][]int32
	q            *channel.Queries
	terms        [][][]string
}

// newChunkHits returns empty lists of every channel of layout for nq
// queries.
func newChunkHits(layout Layout, nq int) *ChunkHits {
	nw := len(layout)
	return &ChunkHits{NQ: nq, Layout: layout, Hits: make([]fuse.Hits, nw), Start: make([][]int64, nw), End: make([][]int64, nw),
		rows: make([][]int32, nw), shards: make([][]int32, nw)}
}

// set makes h (merged over shards) the lists of channel ci.
func (ch *ChunkHits) set(ci int, h channel.Hits) {
	ch.Hits[ci] = fuse.Hits{K: h.K, Docs: h.Docs, Scores: h.Scores}
	ch.Start[ci], ch.End[ci], ch.rows[ci], ch.shards[ci] = h.Start, h.End, h.Rows, h.Shards
}

// searched reports whether channel ci was searched for the batch.
func (ch *ChunkHits) searched(ci int) bool {
	h := ch.Hits[ci]
	return ch.NQ == 0 || h.K > 0 && len(h.Docs) == ch.NQ*h.K
}

// Concat puts the lists of batches of queries one after the other: the
// lists of every query of parts, in order. The parts must have the same
// layout and lengths of lists; what explains their hits is not kept.
func Concat(parts []*ChunkHits) (*ChunkHits, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("msrag: no chunk lists to put together")
	}
	out := &ChunkHits{Layout: parts[0].Layout, Dims: parts[0].Dims}
	nw := len(out.Layout)
	out.Hits, out.Start, out.End = make([]fuse.Hits, nw), make([][]int64, nw), make([][]int64, nw)
	for _, p := range parts {
		if len(p.Layout) != nw || p.Dims != out.Dims {
			return nil, fmt.Errorf("msrag: chunk lists of %d channels and %d dims put together with %d and %d", len(p.Layout), p.Dims, nw, out.Dims)
		}
		out.NQ += p.NQ
		out.Queries = append(out.Queries, p.Queries...)
		for w := range nw {
			h := &out.Hits[w]
			if p.NQ > 0 && h.K != 0 && h.K != p.Hits[w].K {
				return nil, fmt.Errorf("msrag: channel %s lists %d and %d chunks per query", out.Layout[w].Name(), h.K, p.Hits[w].K)
			}
			if p.NQ > 0 {
				h.K = p.Hits[w].K
			}
			h.Docs = append(h.Docs, p.Hits[w].Docs...)
			h.Scores = append(h.Scores, p.Hits[w].Scores...)
			out.Start[w] = append(out.Start[w], p.Start[w]...)
			out.End[w] = append(out.End[w], p.End[w]...)
		}
	}
	return out, nil
}

// Subset returns the lists of the queries idx (positions in ch), in that
// order; what explains their hits is not kept.
func (ch *ChunkHits) Subset(idx []int) *ChunkHits {
	nw := len(ch.Layout)
	sub := &ChunkHits{NQ: len(idx), Layout: ch.Layout, Dims: ch.Dims, Hits: make([]fuse.Hits, nw), Start: make([][]int64, nw), End: make([][]int64, nw)}
	for w := range nw {
		sub.Hits[w].K = ch.Hits[w].K
	}
	for _, q := range idx {
		if ch.Dims > 0 && len(ch.Queries) > 0 {
			sub.Queries = append(sub.Queries, ch.Queries[q*ch.Dims:(q+1)*ch.Dims]...)
		}
		for w := range nw {
			k := ch.Hits[w].K
			h := &sub.Hits[w]
			h.Docs = append(h.Docs, ch.Hits[w].Docs[q*k:(q+1)*k]...)
			h.Scores = append(h.Scores, ch.Hits[w].Scores[q*k:(q+1)*k]...)
			sub.Start[w] = append(sub.Start[w], ch.Start[w][q*k:(q+1)*k]...)
			sub.End[w] = append(sub.End[w], ch.End[w][q*k:(q+1)*k]...)
		}
	}
	return sub
}
