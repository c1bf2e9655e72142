package msrag

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/router"
)

// Fusion says how the index's channels become one document ranking per
// query (fusion.Fusion: a rule, the channels it fuses with their weights or
// coefficients, an optional router); ParseFusion reads its text form.
type Fusion = fusion.Fusion

// ErrUnknownRule is wrapped by ParseFusion's error for a rule that is
// neither a method nor a channel's name (fusion.ErrUnknownRule).
var ErrUnknownRule = fusion.ErrUnknownRule

// ParseFusion reads a fusion rule (fusion.Parse: "rrf",
// "combsum:norm=zscore,windows=all", "w100", a channel of any kind, ...).
func ParseFusion(s string) (Fusion, error) { return fusion.Parse(s) }

// Single returns the fusion that ranks by one window alone.
func Single(window string) Fusion {
	return Fusion{Rule: fuse.Rule{Method: fuse.MethodMaxP}, Windows: []string{window}}
}

// DefaultHybrid is the fusion of channels of several kinds an index with
// them ranks by unless told otherwise (Index.DefaultFusion): CombSUM of every
// channel's z-scored scores, no parameter. It is the choice of the procedure
// that held best when tested leaving one dataset out (keep this rule unless
// another is above it on every training split beyond its bootstrap
// interval), applied to the training splits of SciFact, NFCorpus and QMSum
// (docs/results.md, "Fusion across kinds").
const DefaultHybrid = "combsum:norm=zscore,windows=all"

// DefaultFusionOf is the default fusion of an index of layout l
// (Index.DefaultFusion): DefaultHybrid over channels of several kinds (less
// the weights of kinds l lacks: hybridOf); rrf over one kind, named by its
// group unless it searches the model's vectors (rrf alone fuses the first
// kind's group).
func DefaultFusionOf(l Layout) Fusion {
	kinds := l.Kinds()
	s := "rrf"
	switch {
	case len(kinds) > 1:
		s = hybridOf(l, DefaultHybrid)
	case len(kinds) == 1 && !kinds[0].Needs().Has(channel.ChunkVectors):
		s = "rrf:windows=" + kinds[0].Name()
	}
	f, err := ParseFusion(s)
	if err != nil {
		panic(fmt.Sprintf("msrag: default fusion %q: %v", s, err))
	}
	return f
}

// hybridOf is the hybrid rule text for an index of layout l: its weights for
// channels or kinds l lacks are left out, so that an index of other kinds
// than those it weighs fuses them at weight 1 (a fusion weighing a kind it
// does not fuse is refused, and a kind no package registered cannot be
// parsed); an index with them ranks by text itself.
func hybridOf(l Layout, text string) string {
	rule, params, _ := strings.Cut(text, ":")
	var keep []string
	for _, p := range strings.Split(params, ",") {
		if ws, ok := strings.CutPrefix(p, "weights="); ok {
			var in []string
			for _, w := range strings.Split(ws, "/") {
				name, _, _ := strings.Cut(w, ":")
				if l.Index(name) >= 0 || slices.ContainsFunc(l.Kinds(), func(k channel.Kind) bool { return k.Name() == name }) {
					in = append(in, w)
				}
			}
			if len(in) == 0 {
				continue
			}
			p = "weights=" + strings.Join(in, "/")
		}
		keep = append(keep, p)
	}
	return rule + ":" + strings.Join(keep, ",")
}

// FuseHits fuses ch by f (the zero Fusion: DefaultFusionOf ch.Layout) into
// k documents per query (document indices below ndocs) without an index: it returns the positions of the channels fused,
// in ch.Layout, and the ranking. Index.Fuse adds the documents' ids and
// evidence.
func FuseHits(f Fusion, ch *ChunkHits, ndocs, k int) ([]int, *fuse.Ranking, error) {
	if f.IsZero() {
		f = DefaultFusionOf(ch.Layout)
	}
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
	fo, err := fuseOptions(f, ch, sel, hits, ndocs, k)
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
func fuseOptions(f Fusion, ch *ChunkHits, sel []int, hits []fuse.Hits, ndocs, k int) (fuse.Options, error) {
	fo := f.Rule.Options(k)
	fo.Workers = 2
	name := func(i int) string { return ch.Layout[sel[i]].Name() }
	if len(f.Weights) > 0 || f.Balance {
		fo.Weights = make([]float64, len(sel))
		for i := range sel {
			fo.Weights[i] = valueOr(f.Weights, name(i), valueOr(f.Weights, ch.Layout[sel[i]].Kind.Name(), 1))
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
	var err error
	switch {
	case f.Adapt != nil && f.Adapt.Scope == fuse.AdaptConsensus:
		err = consensusWeights(&fo, hits, ndocs, f.Adapt.T)
	case f.Adapt != nil && f.Adapt.Scope == fuse.AdaptKinds:
		fo.QueryWeights, err = kindWeights(*f.Adapt, hits, ch.Layout, sel)
	case f.Adapt != nil:
		fo.QueryWeights, err = windowWeights(*f.Adapt, hits)
	case f.Router != nil:
		fo.QueryWeights, err = routerWeights(f.Router, ch, sel)
	}
	if err != nil {
		return fo, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return fo, nil
}

// windowWeights weighs each window per query by a feature of its list.
func windowWeights(a fuse.Adapt, hits []fuse.Hits) ([]float64, error) {
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, err
	}
	return fuse.AdaptiveWeights(feats, len(hits), a.Feature, a.T)
}

// kindWeights weighs each kind of channel fused per query by a feature of
// its lists; each window gets its kind's weight.
func kindWeights(a fuse.Adapt, hits []fuse.Hits, l Layout, sel []int) ([]float64, error) {
	kind, nk := fusion.KindNumbers(l, sel)
	feats, err := fuse.KindFeatures(hits, kind, nk, a.Feature)
	if err != nil {
		return nil, err
	}
	kw, err := fuse.KindWeights(feats, nk, a.Feature, a.T)
	if err != nil {
		return nil, err
	}
	nq, nw := len(kw)/nk, len(sel)
	out := make([]float64, nq*nw)
	for q := range nq {
		for w, k := range kind {
			out[q*nw+w] = kw[q*nk+k]
		}
	}
	return out, nil
}

// consensusWeights multiplies the static weights by each window's agreement
// with the batch's consensus.
func consensusWeights(fo *fuse.Options, hits []fuse.Hits, ndocs int, gamma float64) error {
	cw, err := fuse.ConsensusWeights(hits, ndocs, gamma)
	if err != nil {
		return err
	}
	if fo.Weights == nil {
		fo.Weights = cw
		return nil
	}
	for i := range cw {
		fo.Weights[i] *= cw[i]
	}
	return nil
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

// routerWeights runs the router over the batch's features (and query
// vectors).
func routerWeights(r *router.Model, ch *ChunkHits, sel []int) ([]float64, error) {
	x, err := RouterInputs(r.Set(), ch, sel)
	if err != nil {
		return nil, err
	}
	if err := fusion.CheckRouter(r, ch.Dims, ch.Layout, sel); err != nil {
		return nil, err
	}
	return r.Weights(x)
}

// RouterInputs builds the input rows of feature set fs for the queries of
// ch, over its channels sel (as Fusion.Select returns them).
func RouterInputs(fs router.FeatureSet, ch *ChunkHits, sel []int) ([]float64, error) {
	hits := make([]fuse.Hits, len(sel))
	for i, wi := range sel {
		hits[i] = ch.Hits[wi]
	}
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, err
	}
	switch fs {
	case router.EmbeddingWindows:
		if ch.Dims == 0 || len(ch.Queries) != ch.NQ*ch.Dims {
			return nil, fmt.Errorf("a router of feature set %s needs the query vectors (search with SearchVectors)", fs)
		}
		return router.Inputs(ch.Queries, ch.Dims, feats, len(hits), fuse.NumFeatures)
	case router.Kinds:
		kind, nk := fusion.KindNumbers(ch.Layout, sel)
		kf, err := fuse.KindFeatures(hits, kind, nk)
		if err != nil {
			return nil, err
		}
		return router.KindInputs(kf, nk*fuse.NumKindFeatures, feats, len(hits), fuse.NumFeatures, fuse.FeatureAgree)
	}
	return nil, fmt.Errorf("router feature set %q: %w", fs, router.ErrInvalid)
}

func valueOr(m map[string]float64, k string, def float64) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}

// CheckFusion fails unless every channel f fuses or weighs is a channel of
// the index, of a kind it can search, so that a search can be refused
// before any query is embedded (CheckServes).
func (ix *Index) CheckFusion(f Fusion) error {
	return CheckServes(f, ix.layout, ix.man.Model, ix.where(), func(k ChannelKind) error {
		return ix.usable(kindIndex(ix.kinds, k))
	})
}

// CheckServes is the one answer to whether an index of the channels l and
// the model m (named where in messages) can serve f: every channel f
// fuses or weighs is one of l's, of a kind that searchable says can be
// searched (nil: every kind), and a router of f reads what the index gives
// it (query vectors of m's dims, the channels f fuses). Index.CheckFusion
// asks it of an open index, a scatter-gather search's gather of the kinds
// its scatter searched, an evaluation of its configurations and a fusion
// model file of its rule.
func CheckServes(f Fusion, l Layout, m ModelInfo, where string, searchable func(ChannelKind) error) error {
	for _, k := range f.KindsNamed(l) {
		if !l.Has(k) {
			return fmt.Errorf("msrag: fusion %s: index %s has no %s windows: %w", f, where, k.Name(), k.Absent())
		}
	}
	sel, err := f.Select(l)
	if err != nil {
		return err
	}
	kinds, _ := f.Kinds(l)
	for _, k := range kinds {
		if searchable == nil {
			break
		}
		if err := searchable(k); err != nil {
			return err
		}
	}
	if f.Router != nil {
		if f.Router.Set() == router.EmbeddingWindows && m.None() {
			return fmt.Errorf("msrag: fusion %s: its router weighs channels by the query vectors, and index %s has no model to embed them with: %w", f, where, ErrNoModel)
		}
		if err := fusion.CheckRouter(f.Router, m.Dims, l, sel); err != nil {
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

// SearchOptions says how to search. The zero value searches every window for
// its top 100 chunks and fuses them by the index's default fusion
// (Index.DefaultFusion: DefaultHybrid over channels of several kinds, RRF
// over one kind's), as msrag search does without --fusion, into 10
// documents.
type SearchOptions struct {
	// K is the number of documents returned per query; default 10.
	K int
	// WindowK is the number of chunks each window's index returns; default 100.
	WindowK int
	// Fusion is the rule that turns the windows' chunk lists into
	// documents; the zero value is the index's default (DefaultFusionOf
	// its layout). ParseFusion("rrf") is RRF over the first kind's group.
	Fusion Fusion
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
	if o.WindowK <= 0 {
		o.WindowK = 100
	}
	return o
}

// Clamp returns opts with its defaults filled in, K at most the number of
// documents and WindowK at most MaxWindowK, so that what a search allocates
// follows the index, not the numbers asked for.
func (ix *Index) Clamp(opts SearchOptions) SearchOptions {
	opts = opts.withDefaults()
	if opts.Fusion.IsZero() {
		opts.Fusion = ix.DefaultFusion()
	}
	opts.K = min(opts.K, max(ix.NumDocs(), 1))
	opts.WindowK = min(opts.WindowK, ix.MaxWindowK())
	return opts
}

// Fuse turns per-window chunk hits into document rankings with opts.Fusion.
func (ix *Index) Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error) {
	opts = ix.Clamp(opts)
	sel, rk, err := FuseHits(opts.Fusion, ch, ix.NumDocs(), opts.K)
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
