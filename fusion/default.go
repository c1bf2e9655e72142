package fusion

import (
	"maps"
	"slices"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
)

// Hybrid returns the fusion of channels of several kinds an index with
// them ranks by unless told otherwise (Default): CombSUM of every channel's
// z-scored scores, no parameter. It is the choice of the procedure that
// held best when tested leaving one dataset out (keep this rule unless
// another is above it on every training split beyond its bootstrap
// interval), applied to the training splits of SciFact, NFCorpus and QMSum
// (docs/results.md, "Fusion across kinds"). Its text form is
// DefaultHybrid.
func Hybrid() Fusion {
	return Fusion{
		Rule:     fuse.Rule{Method: fuse.MethodCombSUM, Norm: fuse.NormZScore},
		Channels: []string{channel.All},
		parsed:   true,
	}
}

// DefaultHybrid is Hybrid in the text form Parse reads (and the name
// msrag eval's reports give it).
var DefaultHybrid = Hybrid().String()

// Default is the fusion an index of layout l ranks by unless told
// otherwise: Hybrid over channels of several kinds (For l: less any
// weights of channels and kinds l lacks); RRF over one kind, named by its
// group unless it searches the model's vectors (RRF alone fuses the first
// kind's group).
func Default(l channel.Layout) Fusion {
	kinds := l.Kinds()
	switch {
	case len(kinds) > 1:
		return Hybrid().For(l)
	case len(kinds) == 1 && !kinds[0].Needs().Has(channel.ChunkVectors):
		return Group(kinds[0].Name())
	}
	return Fusion{parsed: true}
}

// For returns f for an index of layout l: its weights of channels or kinds
// l lacks left out, so that an index of other kinds than those it weighs
// fuses them at weight 1, where f itself is refused for weighing a kind it
// does not fuse. f is not changed.
func (f Fusion) For(l channel.Layout) Fusion {
	if f.Weights == nil {
		return f
	}
	kinds := l.Kinds()
	f.Weights = maps.Clone(f.Weights)
	maps.DeleteFunc(f.Weights, func(name string, _ float64) bool {
		return l.Index(name) < 0 && !slices.ContainsFunc(kinds, func(k channel.Kind) bool { return k.Name() == name })
	})
	if len(f.Weights) == 0 {
		f.Weights = nil
	}
	return f
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
