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
		if err := ix.usable(slicesIndex(ix.kinds, k)); err != nil {
			return err
		}
	}
	if f.Router != nil {
		if !ix.Dense() {
			return fmt.Errorf("msrag: fusion %s: its router weighs channels by the query vectors, and index %s has no model to embed them with: %w", f, ix.where(), ErrNoDense)
		}
		if err := checkRouter(f.Router, ix.man.Model.Dims); err != nil {
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
	if f.Router != nil {
		n |= channel.QueryVectors
	}
	return n
}

func slicesIndex(ks []channel.Kind, k channel.Kind) int {
	for i, x := range ks {
		if x == k {
			return i
		}
	}
	return -1
}

// checkRouter fails unless r is a valid router for queries of dims
// dimensions.
func checkRouter(r *router.Model, dims int) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return r.CheckInputs(dims, fuse.NumFeatures)
}

// DefaultFusion is the fusion the index ranks by unless told otherwise:
// DefaultHybrid when it has channels of several kinds, RRF over the
// channels of its one kind otherwise.
func (ix *Index) DefaultFusion() Fusion { return DefaultFusionOf(ix.layout) }

// DefaultFusionOf is the default fusion of an index of layout l
// (Index.DefaultFusion).
func DefaultFusionOf(l Layout) Fusion {
	kinds := l.Kinds()
	s := "rrf"
	switch {
	case len(kinds) > 1:
		s = DefaultHybrid
	case len(kinds) == 1 && kinds[0] != Dense:
		s = "rrf:windows=" + kinds[0].Name()
	}
	f, err := ParseFusion(s)
	if err != nil {
		panic(fmt.Sprintf("msrag: default fusion %q: %v", s, err))
	}
	return f
}

// Fuse turns per-window chunk hits into document rankings with opts.Fusion.
func (ix *Index) Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error) {
	opts = ix.Clamp(opts)
	sel, rk, err := opts.Fusion.FuseHits(ch, ix.NumDocs(), opts.K)
	if err != nil {
		return nil, err
	}
	return ix.hitsOf(ch, sel, rk, !opts.SkipTerms), nil
}

// FuseHits fuses ch into k documents per query (document indices below ndocs)
// without an index: it returns the positions of the channels fused, in
// ch.Layout, and the ranking. Index.Fuse adds the documents' ids and
// evidence.
func (f Fusion) FuseHits(ch *ChunkHits, ndocs, k int) ([]int, *fuse.Ranking, error) {
	sel, err := f.Select(ch.Layout)
	if err != nil {
		return nil, nil, err
	}
	hits := make([]fuse.Hits, len(sel))
	for i, wi := range sel {
		hits[i] = ch.Hits[wi]
		if h := hits[i]; ch.NQ > 0 && (h.K <= 0 || len(h.Docs) != ch.NQ*h.K) {
			return nil, nil, fmt.Errorf("msrag: fusion %s: channel %s was not searched for these queries", f, ch.Layout[wi].Name())
		}
	}
	fo, err := fuseOptions(f, ch, sel, hits, k)
	if err != nil {
		return nil, nil, err
	}
	rk, err := fuse.Fuse(f.Method, hits, ndocs, fo)
	if err != nil {
		return nil, nil, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return sel, rk, nil
}

// fuseOptions turns f into fuse's options for the selected windows: static
// weights, linear coefficients and, with Adapt or a Router, query weights.
func fuseOptions(f Fusion, ch *ChunkHits, sel []int, hits []fuse.Hits, k int) (fuse.Options, error) {
	fo := f.Rule.Options(k)
	fo.Workers = 2
	name := func(i int) string { return ch.Layout[sel[i]].Name() }
	if len(f.Weights) > 0 || f.Balance {
		fo.Weights = make([]float64, len(sel))
		for i := range sel {
			fo.Weights[i] = valueOr(f.Weights, name(i), 1)
		}
	}
	if f.Balance {
		balance(fo.Weights, ch.Layout, sel)
	}
	if f.Method == fuse.MethodLinear {
		fo.Linear = make([]float64, 0, fuse.NumLinear*len(sel))
		for i := range sel {
			fo.Linear = append(fo.Linear, valueOr(f.Score, name(i), 0), valueOr(f.Rank, name(i), 0), valueOr(f.Votes, name(i), 0))
		}
	}
	if f.Adapt == nil && f.Router == nil {
		return fo, nil
	}
	feats, err := fuse.Features(hits)
	if err != nil {
		return fo, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	if f.Adapt != nil {
		fo.QueryWeights, err = fuse.AdaptiveWeights(feats, len(sel), f.Adapt.Feature, f.Adapt.T)
	} else {
		fo.QueryWeights, err = routerWeights(f.Router, ch, feats, len(sel))
	}
	if err != nil {
		return fo, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return fo, nil
}

// balance multiplies the weights of the selected channels so that each kind
// fused weighs as much in all: by (channels) / (kinds × channels of its kind).
func balance(w []float64, l Layout, sel []int) {
	per := map[ChannelKind]int{}
	for _, i := range sel {
		per[l[i].Kind]++
	}
	for j, i := range sel {
		w[j] *= float64(len(sel)) / float64(len(per)*per[l[i].Kind])
	}
}

// routerWeights runs the router over the batch's query vectors and features.
func routerWeights(r *router.Model, ch *ChunkHits, feats []float64, nw int) ([]float64, error) {
	if ch.Dims == 0 || len(ch.Queries) != ch.NQ*ch.Dims {
		return nil, fmt.Errorf("a router needs the query vectors (search with SearchVectors)")
	}
	if err := checkRouter(r, ch.Dims); err != nil {
		return nil, err
	}
	x, err := router.Inputs(ch.Queries, ch.Dims, feats, nw, fuse.NumFeatures)
	if err != nil {
		return nil, err
	}
	return r.Weights(x)
}

func valueOr(m map[string]float64, k string, def float64) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}

// hitsOf turns a fused ranking into Hits with their evidence (with terms,
// what explains each chunk: the query terms of a lexical one).
func (ix *Index) hitsOf(ch *ChunkHits, sel []int, rk *fuse.Ranking, terms bool) [][]Hit {
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
			ix.explain(ch, q, row, refs)
		}
		out[q] = row
	}
	return out
}
