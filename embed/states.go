package embed

import (
	"context"
	"math"
)

// TokenStates is the model's output for every token of one sequence, as the
// model saw it: Lead rows (the leading special tokens, such as [CLS], and the
// role's prefix), then Content rows (the content ids given), then the
// trailing special tokens ([SEP]). Rows holds one row of Spec().Dims float32
// per token, row-major, padding left out.
type TokenStates struct {
	Rows          []float32
	Lead, Content int
}

// Len returns the number of rows.
func (s TokenStates) Len(dims int) int { return len(s.Rows) / dims }

// TokenEmbedder is an Embedder whose model outputs one vector per token
// and that can hand those vectors back, so that a caller can pool spans of
// a sequence itself (late chunking: one pass over a long span, one vector
// per window of it). Only a model whose sentence vector is the mean of its
// token vectors (Spec().Pooling is PoolMean) gives spans a meaning.
type TokenEmbedder interface {
	Embedder
	// EmbedTokenStates encodes each sequence of content ids once, with the
	// role's prefix and the special tokens, batched as EmbedChunks batches,
	// and calls fn with sequence i's token states. fn is called once per
	// sequence, one call at a time, in no particular order; the states are
	// valid only during the call. A sequence longer than
	// Spec().MaxContent(role) is an error, never truncated. An error from fn
	// stops the work and is returned.
	EmbedTokenStates(ctx context.Context, seqs [][]int32, role Role, fn func(i int, s TokenStates) error) error
}

// Normalize scales v to unit L2 norm, the norm summed in float64 and kept
// away from 0 by 1e-12 (as torch.nn.functional.normalize).
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	n := math.Max(math.Sqrt(s), 1e-12)
	inv := float32(1 / n)
	for k := range v {
		v[k] *= inv
	}
}
