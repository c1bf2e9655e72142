package fusion

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/router"
)

// Fuse fuses the lists l by f (the zero Fusion: Default of l.Layout) into
// k documents per query (document indices below ndocs): it returns the
// positions of the channels fused, in l.Layout, and the ranking, whose
// evidence names its chunks by those positions' order.
func Fuse(f Fusion, l *Lists, ndocs, k int) ([]int, *fuse.Ranking, error) {
	if f.IsZero() {
		f = Default(l.Layout)
	}
	sel, err := f.Select(l.Layout)
	if err != nil {
		return nil, nil, err
	}
	hits := make([]fuse.Hits, len(sel))
	for i, c := range sel {
		if !l.Searched(c) {
			return nil, nil, fmt.Errorf("msrag: fusion %s: channel %s was not searched for these queries", f, l.Layout[c].Name())
		}
		hits[i] = l.Hits[c]
	}
	fo, err := options(f, l, sel, hits, ndocs, k)
	if err != nil {
		return nil, nil, err
	}
	rk, err := fuse.Fuse(f.Method, hits, ndocs, fo)
	if err != nil {
		return nil, nil, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return sel, rk, nil
}

// options turns f into fuse's options for the selected channels: static
// weights, linear coefficients and, with Adapt or a Router, query weights.
func options(f Fusion, l *Lists, sel []int, hits []fuse.Hits, ndocs, k int) (fuse.Options, error) {
	fo := f.Rule.Options(k)
	fo.Workers = 2
	name := func(i int) string { return l.Layout[sel[i]].Name() }
	if len(f.Weights) > 0 || f.Balance {
		fo.Weights = make([]float64, len(sel))
		for i := range sel {
			fo.Weights[i] = valueOr(f.Weights, name(i), valueOr(f.Weights, l.Layout[sel[i]].Kind.Name(), 1))
		}
	}
	if f.Balance {
		balance(fo.Weights, l.Layout, sel)
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
		fo.QueryWeights, err = kindWeights(*f.Adapt, hits, l.Layout, sel)
	case f.Adapt != nil:
		fo.QueryWeights, err = channelWeights(*f.Adapt, hits)
	case f.Router != nil:
		fo.QueryWeights, err = routerWeights(f.Router, l, sel)
	}
	if err != nil {
		return fo, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return fo, nil
}

// channelWeights weighs each channel per query by a feature of its list.
func channelWeights(a fuse.Adapt, hits []fuse.Hits) ([]float64, error) {
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, err
	}
	return fuse.AdaptiveWeights(feats, len(hits), a.Feature, a.T)
}

// kindWeights weighs each kind of channel fused per query by a feature of
// its lists; each channel gets its kind's weight.
func kindWeights(a fuse.Adapt, hits []fuse.Hits, l channel.Layout, sel []int) ([]float64, error) {
	kind, nk := KindNumbers(l, sel)
	feats, err := fuse.KindFeatures(hits, kind, nk, a.Feature)
	if err != nil {
		return nil, err
	}
	kw, err := fuse.KindWeights(feats, nk, a.Feature, a.T)
	if err != nil {
		return nil, err
	}
	nq, nc := len(kw)/nk, len(sel)
	out := make([]float64, nq*nc)
	for q := range nq {
		for c, k := range kind {
			out[q*nc+c] = kw[q*nk+k]
		}
	}
	return out, nil
}

// consensusWeights multiplies the static weights by each channel's
// agreement with the batch's consensus.
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
func balance(w []float64, l channel.Layout, sel []int) {
	per := map[channel.Kind]int{}
	for _, i := range sel {
		per[l[i].Kind]++
	}
	for j, i := range sel {
		w[j] *= float64(len(sel)) / float64(len(per)*per[l[i].Kind])
	}
}

// routerWeights runs the router over the batch's features (and query
// vectors).
func routerWeights(r *router.Model, l *Lists, sel []int) ([]float64, error) {
	x, err := RouterInputs(r.Set(), l, sel)
	if err != nil {
		return nil, err
	}
	if err := CheckRouter(r, l.Dims, l.Layout, sel); err != nil {
		return nil, err
	}
	return r.Weights(x)
}

// RouterInputs builds the input rows of feature set fs for the queries of
// l, over its channels sel (as Fusion.Select returns them).
func RouterInputs(fs router.FeatureSet, l *Lists, sel []int) ([]float64, error) {
	hits := make([]fuse.Hits, len(sel))
	for i, c := range sel {
		hits[i] = l.Hits[c]
	}
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, err
	}
	switch fs {
	case router.EmbeddingWindows:
		if l.Dims == 0 || len(l.Queries) != l.NQ*l.Dims {
			return nil, fmt.Errorf("a router of feature set %s needs the query vectors (search with SearchVectors)", fs)
		}
		return router.Inputs(l.Queries, l.Dims, feats, len(hits), fuse.NumFeatures)
	case router.Kinds:
		kind, nk := KindNumbers(l.Layout, sel)
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
