package fusion

import (
	"maps"
	"slices"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
)

// Hybrid returns the fusion of channels of several kinds an index with
// them ranks by unless told otherwise (Default): RRF over every channel,
// each of the kind named lexical weighing 1.5 (over an index without it
// every channel weighs 1), every kind weighed per query by its best
// document's RRF score (adapt=kind-top:1). It was chosen on training
// splits only (SciFact, NFCorpus, QMSum's questions and its summaries as
// queries), by its worst margin over the better kind among the rules that
// rank a query the same whatever queries are searched with it
// (docs/results.md, "Fusion across kinds"). Its text form is DefaultHybrid.
func Hybrid() Fusion {
	return Fusion{
		Rule:     fuse.Rule{Method: fuse.MethodRRF, Adapt: &fuse.Adapt{Scope: fuse.AdaptKinds, Feature: fuse.KindTop, T: 1}},
		Channels: []string{channel.All},
		Weights:  map[string]float64{"lexical": 1.5},
		parsed:   true,
	}
}

// DefaultHybrid is Hybrid in the text form Parse reads (and the name
// msrag eval's reports give it).
var DefaultHybrid = Hybrid().String()

// Default is the fusion an index of layout l ranks by unless told
// otherwise: Hybrid over channels of several kinds, less its weights of
// channels and kinds l lacks (so that an index of other kinds fuses them
// at weight 1, where a weight of a kind not fused would be refused); RRF
// over one kind, named by its group unless it searches the model's
// vectors (RRF alone fuses the first kind's group).
func Default(l channel.Layout) Fusion {
	kinds := l.Kinds()
	switch {
	case len(kinds) > 1:
		f := Hybrid()
		maps.DeleteFunc(f.Weights, func(name string, _ float64) bool {
			return l.Index(name) < 0 && !slices.ContainsFunc(kinds, func(k channel.Kind) bool { return k.Name() == name })
		})
		if len(f.Weights) == 0 {
			f.Weights = nil
		}
		return f
	case len(kinds) == 1 && !kinds[0].Needs().Has(channel.ChunkVectors):
		return Group(kinds[0].Name())
	}
	return Fusion{parsed: true}
}

// Group returns RRF over the channels of a group: a kind's name, or
// channel.All ("rrf:windows=NAME").
func Group(name string) Fusion {
	return Fusion{Channels: []string{name}, parsed: true}
}

// Single returns the fusion that ranks by one channel alone.
func Single(name string) Fusion {
	return Fusion{Rule: fuse.Rule{Method: fuse.MethodMaxP}, Channels: []string{name}, parsed: true}
}
