package msrag

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/router"
)

// CheckFusion fails unless every window f fuses or weighs is a window of the
// index, so that a search can be refused before any query is embedded.
func (ix *Index) CheckFusion(f Fusion) error {
	if !ix.Dense() && f.dense() {
		return errNoDense(f, ix.where())
	}
	if err := ix.checkLexical(f); err != nil {
		return err
	}
	if _, err := f.Select(ix.Layout()); err != nil {
		return err
	}
	if f.Router != nil {
		if err := checkRouter(f.Router, ix.man.Model.Dims); err != nil {
			return fmt.Errorf("msrag: fusion %s: %w", f, err)
		}
	}
	return nil
}

// checkRouter fails unless r is a valid router for queries of dims
// dimensions.
func checkRouter(r *router.Model, dims int) error {
	if err := r.Validate(); err != nil {
		return err
	}
	return r.CheckInputs(dims, fuse.NumFeatures)
}

// checkLexical refuses a fusion of lexical channels on an index without
// them, or whose analyzer this msrag does not produce.
func (ix *Index) checkLexical(f Fusion) error {
	if !f.lexical() {
		return nil
	}
	if ix.lex == nil {
		return fmt.Errorf("msrag: fusion %s: index %s has no lexical windows: it was built before they existed or with --no-lexical: %w", f, ix.where(), ErrNoLexical)
	}
	return ix.lex.err
}

// where names the index in messages: its directory, or "in memory".
func (ix *Index) where() string {
	if ix.dir == "" {
		return "in memory"
	}
	return ix.dir
}

// lexical reports whether f fuses a lexical channel.
func (f Fusion) lexical() bool {
	return slices.ContainsFunc(f.Windows, func(w string) bool {
		return w == groupLexical || w == groupAll || strings.HasPrefix(w, lexicalPrefix)
	})
}

// Select returns the positions, in layout, of the channels f fuses: those it
// names, those of the group it names (dense, lexical, all), or every dense
// sliding window (every lexical channel in the layout of an index without
// dense windows, which refuses a dense channel). It fails unless every
// channel f names, weighs or routes is one of layout's.
func (f Fusion) Select(layout Layout) ([]int, error) {
	if layout.lexicalOnly() && f.dense() {
		return nil, fmt.Errorf("msrag: fusion %s: the index has no dense windows (built with --model none), only %s: %w", f, layout, ErrNoDense)
	}
	group := ""
	switch {
	case len(f.Windows) == 0 && layout.lexicalOnly():
		group = groupLexical
	case len(f.Windows) == 0:
		group = groupDense
	case slices.Contains(channelGroups, f.Windows[0]):
		group = f.Windows[0]
	}
	var sel []int
	if group != "" {
		for i, c := range layout {
			if inGroup(c, group) {
				sel = append(sel, i)
			}
		}
		lexical := slices.ContainsFunc(layout, func(c Channel) bool { return c.Kind == Lexical })
		if len(sel) == 0 || group == groupAll && !lexical {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no channel of %s (it has %s)", f, groupDesc[group], layout)
		}
	}
	for _, w := range f.Windows {
		if group != "" {
			break
		}
		i := layout.Index(w)
		if i < 0 {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no window %s (it has %s)", f, w, layout)
		}
		sel = append(sel, i)
	}
	fused := make(Layout, len(sel))
	for i, wi := range sel {
		fused[i] = layout[wi]
	}
	for _, m := range []map[string]float64{f.Weights, f.Score, f.Rank, f.Votes} {
		for w := range m {
			if fused.Index(w) < 0 {
				return nil, fmt.Errorf("msrag: fusion %s: weight for window %s, which it does not fuse", f, w)
			}
		}
	}
	if f.Router != nil && !slices.Equal(fused.Names(), f.Router.Windows) {
		return nil, fmt.Errorf("msrag: fusion %s: its router weighs windows %v, the rule fuses %v", f, f.Router.Windows, fused.Names())
	}
	return sel, nil
}

var groupDesc = map[string]string{groupDense: "the dense sliding windows", groupLexical: "the lexical channels", groupAll: "the lexical channels to fuse with the dense sliding windows"}

// inGroup reports whether channel c is one of group's: the dense sliding
// windows, the lexical channels, or both.
func inGroup(c Channel, group string) bool {
	dense := c.Kind == Dense && !c.Window.Truncate
	switch group {
	case groupDense:
		return dense
	case groupLexical:
		return c.Kind == Lexical
	}
	return dense || c.Kind == Lexical
}

// DefaultFusion is the fusion the index ranks by unless told otherwise:
// DefaultHybrid when it has dense and lexical channels, RRF over the
// channels of its one kind otherwise.
func (ix *Index) DefaultFusion() Fusion {
	l := ix.Layout()
	dense, lexical := len(l.Dense()) > 0, len(l.Dense()) < len(l)
	s := "rrf"
	switch {
	case dense && lexical:
		s = DefaultHybrid
	case lexical:
		s = "rrf:windows=" + groupLexical
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
			return nil, nil, fmt.Errorf("msrag: fusion %s: channel %s was not searched (a lexical channel needs the query texts: SearchLexical)", f, ch.Layout[wi].Name())
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
// the query terms of each lexical chunk).
func (ix *Index) hitsOf(ch *ChunkHits, sel []int, rk *fuse.Ranking, terms bool) [][]Hit {
	out := make([][]Hit, ch.NQ)
	var refs []termRef
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
				if terms && ch.Layout[wi].Kind == Lexical {
					refs = append(refs, termRef{hit: r, ev: j, ci: wi, p: p})
				}
			}
			row = append(row, Hit{DocID: ix.DocID(int(d)), Doc: int(d), Score: scores[r], Rank: r + 1, Evidence: evs})
		}
		ix.lexicalTerms(ch, q, row, refs)
		out[q] = row
	}
	return out
}
