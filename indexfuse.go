package msrag

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/router"
)

// CheckFusion fails unless every channel f fuses or weighs is a channel of
// the index, of a kind it can search, so that a search can be refused
// before any query is embedded.
func (ix *Index) CheckFusion(f Fusion) error {
	for _, k := range f.kinds(ix.layout) {
		if !ix.layout.Has(k) {
			return fmt.Errorf("msrag: fusion %s: index %s has no %s windows: %w", f, ix.where(), k.Name(), k.Absent())
		}
	}
	if _, err := f.Select(ix.layout); err != nil {
		return err
	}
	for _, k := range ix.fusionKinds(f) {
		if err := ix.usable(kindIndex(ix.kinds, k)); err != nil {
			return err
		}
	}
	if f.Router != nil {
		if f.Router.Set() == router.EmbeddingWindows && !ix.HasModel() {
			return fmt.Errorf("msrag: fusion %s: its router weighs channels by the query vectors, and index %s has no model to embed them with: %w", f, ix.where(), ErrNoModel)
		}
		sel, _ := f.Select(ix.layout)
		if err := checkRouter(f.Router, ix.man.Model.Dims, ix.layout, sel); err != nil {
			return fmt.Errorf("msrag: fusion %s: %w", f, err)
		}
	}
	return nil
}

// fusionKinds returns the kinds of the channels f fuses.
func (ix *Index) fusionKinds(f Fusion) []channel.Kind {
	kinds, _ := f.Kinds(ix.layout)
	return kinds
}

// fusionNeeds returns what a search for f reads of the queries: what its
// channels need, and their vectors for a router.
func (ix *Index) fusionNeeds(f Fusion) channel.Needs {
	sel, _ := f.Select(ix.layout)
	n := ix.layout.Needs(sel)
	if f.Router != nil && f.Router.Set() == router.EmbeddingWindows {
		n |= channel.QueryVectors
	}
	return n
}

// DefaultFusion is the fusion the index ranks by unless told otherwise:
// DefaultHybrid when it has channels of several kinds, RRF over the
// channels of its one kind otherwise.
func (ix *Index) DefaultFusion() Fusion { return DefaultFusionOf(ix.layout) }

// Fuse turns per-window chunk hits into document rankings with opts.Fusion.
func (ix *Index) Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error) {
	opts = ix.Clamp(opts)
	sel, rk, err := opts.Fusion.FuseHits(ch, ix.NumDocs(), opts.K)
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
