package onnx

import (
	"context"
	"fmt"

	"github.com/msrag/msrag/embed"
)

// EmbedTokenStates encodes content ids as EmbedTokens does and hands every
// sequence's token vectors (last_hidden_state, padding left out) to fn
// instead of pooling them (embed.TokenEmbedder). fn is called one sequence
// at a time, in the same order whatever the number of sessions, so that
// sums over its calls come out the same to the bit; the rows it gets are
// reused once it returns. The model must output one vector per token: a
// model that pools itself is refused.
func (e *Embedder) EmbedTokenStates(ctx context.Context, seqs [][]int32, role Role, fn func(int, embed.TokenStates) error) error {
	full, err := e.statesSeqs(seqs, role)
	if err != nil {
		return err
	}
	return e.runAll(ctx, full, e.stater(seqs, role, fn), true)
}

// statesSeqs checks that the model has token states and makes the full
// sequences.
func (e *Embedder) statesSeqs(seqs [][]int32, role Role) ([][]int32, error) {
	if e.pooling == PoolNone {
		return nil, fmt.Errorf("onnx: model %s outputs one pooled vector per text (%s), not one per token: %w",
			e.info.Name, e.info.Output, ErrInput)
	}
	return e.fullSeqs(seqs, role)
}

// stater returns the rowFunc that hands sequence i's real rows to fn.
func (e *Embedder) stater(seqs [][]int32, role Role, fn func(int, embed.TokenStates) error) rowFunc {
	lead, dims := e.lead+len(e.prefix[role]), e.hidden
	return func(i int, states []float32, mask []int64) error {
		n := 0
		for n < len(mask) && mask[n] != 0 {
			n++
		}
		return fn(i, embed.TokenStates{Rows: states[:n*dims], Lead: lead, Content: len(seqs[i])})
	}
}

// EmbedTokenStates hands token vectors to fn as Embedder.EmbedTokenStates
// does, over the pool's sessions.
func (p *Pool) EmbedTokenStates(ctx context.Context, seqs [][]int32, role Role, fn func(int, embed.TokenStates) error) error {
	full, err := p.members[0].statesSeqs(seqs, role)
	if err != nil {
		return err
	}
	return runAll(ctx, p.workers(), full, func(e *Embedder) rowFunc { return e.stater(seqs, role, fn) }, true)
}

var (
	_ embed.TokenEmbedder = (*Embedder)(nil)
	_ embed.TokenEmbedder = (*Pool)(nil)
)
