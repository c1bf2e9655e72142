package msrag

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
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

// NewChunkHits returns empty lists of every channel of layout for nq
// queries.
func NewChunkHits(layout Layout, nq int) *ChunkHits {
	nw := len(layout)
	return &ChunkHits{NQ: nq, Layout: layout, Hits: make([]fuse.Hits, nw), Start: make([][]int64, nw), End: make([][]int64, nw),
		rows: make([][]int32, nw), shards: make([][]int32, nw)}
}

// set makes h (merged over shards) the lists of channel ci.
func (ch *ChunkHits) set(ci int, h channel.Hits) {
	ch.Hits[ci] = fuse.Hits{K: h.K, Docs: h.Docs, Scores: h.Scores}
	ch.Start[ci], ch.End[ci], ch.rows[ci], ch.shards[ci] = h.Start, h.End, h.Rows, h.Shards
}

// SetGathered makes h, merged over shards searched elsewhere (the gather
// of a scatter-gather search), the lists of channel ci, and terms (nil:
// none) what explains each of its slots.
func (ch *ChunkHits) SetGathered(ci int, h channel.Hits, terms [][]string) {
	ch.Hits[ci] = fuse.Hits{K: h.K, Docs: h.Docs, Scores: h.Scores}
	ch.Start[ci], ch.End[ci] = h.Start, h.End
	if terms != nil {
		if ch.terms == nil {
			ch.terms = make([][][]string, len(ch.Layout))
		}
		ch.terms[ci] = terms
	}
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
	// Channel is the channel that ranked the chunk: its kind and window
	// (a whole-document channel has the zero window, and spans the
	// document from 0 to the end of its last token).
	Channel    Channel
	Window     chunk.Window // the window the chunk came from (Channel.Window)
	ChunkRank  int          // the chunk's rank in that window's list, from 1
	ChunkScore float32      // its similarity (inner product; minus the distance for L2)
	Start, End int64        // its byte span in the document's text (title + " " + text)
	// Terms are, for a chunk of a kind that explains its hits
	// (channel.Explainer), the query's terms it holds, in the query's
	// order; nil for another kind's.
	Terms []string
}

// evidenceRef is an evidence chunk of a query's hits: hit and ev place it
// in the hits, ci and p in the chunk lists.
type evidenceRef struct{ hit, ev, ci, p int }

// explain sets the Terms of the evidence refs names in row (query q's hits)
// to what explains each chunk: the terms a scatter-gather search brought,
// or those the chunk's kind gives (channel.Explainer: the query terms a
// chunk holds). The chunks are explained together per channel and
// shard, so that each query term's postings are decoded once for all of
// them; a channel without a trace of its search is left without terms. A
// kind that fails to explain its chunks fails the search: its terms are
// never dropped in silence.
func (ix *Index) explain(ch *ChunkHits, q int, row []Hit, refs []evidenceRef) error {
	if ch.terms != nil {
		for _, r := range refs {
			if t := ch.terms[r.ci]; t != nil {
				row[r.hit].Evidence[r.ev].Terms = t[r.p]
			}
		}
		return nil
	}
	if ch.q == nil || ch.rows == nil {
		return nil
	}
	type group struct {
		ci    int
		shard int32
	}
	var groups map[group][]int // positions in refs; none for channels without terms
	for i, r := range refs {
		if ch.rows[r.ci] == nil || !ix.explains(ch.Layout[r.ci].Kind) {
			continue
		}
		if groups == nil {
			groups = map[group][]int{}
		}
		g := group{ci: r.ci}
		if s := ch.shards[r.ci]; s != nil {
			g.shard = s[r.p]
		}
		groups[g] = append(groups[g], i)
	}
	for g, list := range groups {
		kind := kindIndex(ix.kinds, ch.Layout[g.ci].Kind)
		if kind < 0 || int(g.shard) >= len(ix.shards) {
			continue
		}
		e, ok := ix.shards[g.shard].parts[kind].(channel.Explainer)
		if !ok {
			continue
		}
		rows := make([]int32, len(list))
		for k, i := range list {
			rows[k] = ch.rows[g.ci][refs[i].p]
		}
		held, err := e.Explain(ch.q, q, g.ci-ix.first[kind], rows)
		if err == nil && len(held) != len(rows) {
			err = fmt.Errorf("%d rows explained of %d", len(held), len(rows))
		}
		if err != nil {
			return fmt.Errorf("msrag: explaining the chunks of channel %s of %s for query %d: %w", ch.Layout[g.ci].Name(), ix.shards[g.shard].where(), q, err)
		}
		for k, i := range list {
			row[refs[i].hit].Evidence[refs[i].ev].Terms = held[k]
		}
	}
	return nil
}

// explains reports whether channels of kind k show the terms a chunk holds
// (their part of a shard is a channel.Explainer).
func (ix *Index) explains(k channel.Kind) bool {
	i := kindIndex(ix.kinds, k)
	if i < 0 || len(ix.shards) == 0 {
		return false
	}
	_, ok := ix.shards[0].parts[i].(channel.Explainer)
	return ok
}
