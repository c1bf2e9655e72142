package msrag

import (
	"fmt"
	"slices"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
)

// ChunkHits is what every channel of an index returned for a batch of
// queries, with rows already mapped to documents: the lists a fusion reads
// (fusion.Lists), and where each hit came from, which explains it.
type ChunkHits struct {
	fusion.Lists

	// rows and shards are, per channel, where each hit came from: its row
	// in the channel of its shard. q is the batch's queries. Both explain
	// the hits (the query terms a chunk holds). terms, when set, are those
	// explanations already made (the files of a scatter-gather search
	// carry them), per channel and hit.
	rows, shards [][]int32
	q            *channel.Queries
	terms        [][][]string
}

// NewChunkHits returns empty lists of every channel of layout for nq
// queries.
func NewChunkHits(layout Layout, nq int) *ChunkHits {
	nw := len(layout)
	return &ChunkHits{Lists: fusion.NewLists(layout, nq), rows: make([][]int32, nw), shards: make([][]int32, nw)}
}

// set makes h (merged over shards) the lists of channel ci.
func (ch *ChunkHits) set(ci int, h channel.Hits) {
	ch.Lists.Set(ci, h)
	ch.rows[ci], ch.shards[ci] = h.Rows, h.Shards
}

// SetGathered makes h, merged over shards searched elsewhere (the gather
// of a scatter-gather search), the lists of channel ci, and terms (nil:
// none) what explains each of its slots.
func (ch *ChunkHits) SetGathered(ci int, h channel.Hits, terms [][]string) {
	ch.Lists.Set(ci, h)
	if terms != nil {
		if ch.terms == nil {
			ch.terms = make([][][]string, len(ch.Layout))
		}
		ch.terms[ci] = terms
	}
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
		kind := slices.Index(ix.kinds, ch.Layout[g.ci].Kind)
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
	i := slices.Index(ix.kinds, k)
	if i < 0 || len(ix.shards) == 0 {
		return false
	}
	_, ok := ix.shards[0].parts[i].(channel.Explainer)
	return ok
}

// SearchOptions says how to search. The zero value searches every window for
// its top 100 chunks and fuses them by the index's default fusion
// (fusion.Default of its layout: fusion.Hybrid over channels of several
// kinds, RRF over one kind's), as msrag search does without --fusion, into
// 10 documents.
type SearchOptions struct {
	// K is the number of documents returned per query; default 10.
	K int
	// ChannelK is the number of chunks each channel returns (its k, the
	// command line's --window-k); default 100.
	ChannelK int
	// Fusion is the rule that turns the windows' chunk lists into
	// documents; the zero value is the index's default (fusion.Default
	// of its layout). fusion.Parse("rrf") is RRF over the first kind's
	// group.
	Fusion fusion.Fusion
	// SkipTerms leaves Evidence.Terms nil. Finding the query terms a
	// chunk holds (channel.Explainer) searches its terms again, which can
	// cost more than the search; a caller that does not show them (msrag
	// search's TREC output) skips it.
	SkipTerms bool
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.K <= 0 {
		o.K = 10
	}
	if o.ChannelK <= 0 {
		o.ChannelK = 100
	}
	return o
}

// Clamp returns opts with its defaults filled in, K at most the number of
// documents and ChannelK at most the rows any channel holds, so that what a search allocates
// follows the index, not the numbers asked for.
func (ix *Index) Clamp(opts SearchOptions) SearchOptions {
	opts = opts.withDefaults()
	if opts.Fusion.IsZero() {
		opts.Fusion = fusion.Default(ix.layout)
	}
	opts.K = min(opts.K, max(ix.NumDocs(), 1))
	opts.ChannelK = min(opts.ChannelK, ix.maxChannelK())
	return opts
}

// Fuse turns the channels' chunk lists into document rankings with
// opts.Fusion (fusion.Fuse), each document with its id and its evidence.
func (ix *Index) Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error) {
	opts = ix.Clamp(opts)
	sel, rk, err := fusion.Fuse(opts.Fusion, &ch.Lists, ix.NumDocs(), opts.K)
	if err != nil {
		return nil, err
	}
	return ix.hitsOf(ch, sel, rk, !opts.SkipTerms)
}

// hitsOf turns a fused ranking into Hits with their evidence (with terms,
// what explains each chunk: the query terms it holds). It fails
// when a channel fails to explain its chunks.
func (ix *Index) hitsOf(ch *ChunkHits, sel []int, rk *fuse.Ranking, terms bool) ([][]Hit, error) {
	out := make([][]Hit, ch.NQ)
	var refs []evidenceRef
	for q := range ch.NQ {
		docs, scores := rk.Query(q)
		row := make([]Hit, 0, len(docs))
		refs = refs[:0]
		for r, d := range docs {
			ev := rk.EvidenceOf(q, r)
			evs := make([]Evidence, len(ev))
			for j, e := range ev {
				wi := sel[e.Window]
				p := q*ch.Hits[wi].K + int(e.Pos)
				evs[j] = Evidence{Channel: ch.Layout[wi], Window: ch.Layout[wi].Window, ChunkRank: int(e.Rank) + 1, ChunkScore: e.Score,
					Start: ch.Start[wi][p], End: ch.End[wi][p]}
				refs = append(refs, evidenceRef{hit: r, ev: j, ci: wi, p: p})
			}
			row = append(row, Hit{DocID: ix.DocID(int(d)), Doc: int(d), Score: scores[r], Rank: r + 1, Evidence: evs})
		}
		if terms {
			if err := ix.explain(ch, q, row, refs); err != nil {
				return nil, err
			}
		}
		out[q] = row
	}
	return out, nil
}
