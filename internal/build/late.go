package build

import (
	"context"
	"fmt"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/late"
)

// pieceRef is a piece of item's pool.
type pieceRef struct {
	item  int
	piece late.Piece
}

// embedLate encodes the segments of bt once each and pools every chunk's
// vector out of their token vectors (package late).
func (b *Builder) embedLate(ctx context.Context, bt *embedBatch) error {
	dims := b.spec.Dims
	seqs := make([][]int32, len(bt.segs))
	for i, s := range bt.segs {
		seqs[i] = s.ids
	}
	refs := make([][]pieceRef, len(bt.segs)) // by segment
	for i, it := range bt.items {
		for _, p := range it.pieces {
			refs[p.Seg] = append(refs[p.Seg], pieceRef{i, p})
		}
	}
	bt.vecs = make([]float32, len(bt.items)*dims)
	counts := make([]int, len(bt.items))
	err := b.late.EmbedTokenStates(ctx, seqs, embed.Passage, func(i int, st embed.TokenStates) error {
		seg := bt.segs[i]
		if st.Content != seg.span.Len() || len(st.Rows)%dims != 0 || st.Lead+st.Content > st.Len(dims) {
			return fmt.Errorf("msrag: embedder %s returned %d floats (%d lead, %d content rows) for a segment of %d tokens of %d dims",
				b.spec.Name, len(st.Rows), st.Lead, st.Content, seg.span.Len(), dims)
		}
		for _, r := range refs[i] {
			counts[r.item] += late.Add(bt.vecs[r.item*dims:(r.item+1)*dims], st, seg.span, r.piece)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range bt.items {
		late.Mean(bt.vecs[i*dims:(i+1)*dims], counts[i], b.spec.Normalize)
	}
	return nil
}

// lateEmbedder checks that spec's model can be late-chunked and returns its
// TokenEmbedder, with the segment's content tokens and the overlap.
func lateEmbedder(e embed.Embedder, overlap int) (embed.TokenEmbedder, int, int, error) {
	spec := e.Spec()
	switch spec.Pooling {
	case embed.PoolMean:
	case embed.PoolCLS:
		return nil, 0, 0, fmt.Errorf("msrag: late chunking pools the mean of a window's token vectors, but model %s's sentence vector is its [CLS] token's (cls pooling): a mean over tokens is not a vector this model was trained to make", spec.Name)
	case embed.PoolNone:
		return nil, 0, 0, fmt.Errorf("msrag: late chunking pools the mean of a window's token vectors, but model %s has %s pooling: it gives one vector per text, not one per token", spec.Name, spec.Pooling)
	default:
		return nil, 0, 0, fmt.Errorf("msrag: late chunking pools the mean of a window's token vectors, but model %s's sentence vector is pooled by %s: a mean over tokens is not a vector this model was trained to make", spec.Name, spec.Pooling)
	}
	te, ok := e.(embed.TokenEmbedder)
	if !ok {
		return nil, 0, 0, fmt.Errorf("msrag: late chunking needs the token vectors of model %s, and its embedder (%T) does not hand them back (embed.TokenEmbedder)", spec.Name, e)
	}
	size := spec.MaxContent(embed.Passage)
	if overlap == 0 {
		overlap = late.DefaultOverlap(size)
	}
	if err := late.Check(size, overlap); err != nil {
		return nil, 0, 0, fmt.Errorf("msrag: model %s: %w", spec.Name, err)
	}
	return te, size, overlap, nil
}
