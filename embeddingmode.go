package msrag

import (
	"fmt"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/late"
)

// Embedding says how a build turns windows into vectors.
type Embedding int

const (
	// Independent encodes every unique chunk alone, with the passage prefix
	// and the special tokens around it.
	Independent Embedding = iota
	// Late encodes each document once, in segments of the model's maximum
	// length, and pools each window's vector out of the token vectors of
	// its span (late chunking; package late says how). Every window size
	// comes from the same pass, and each window's vector has seen its
	// context. It needs a model whose sentence vector is the mean of its
	// token vectors (embed.PoolMean) and that hands back its token vectors
	// (embed.TokenEmbedder).
	Late
)

var embeddingNames = [...]string{Independent: "independent", Late: "late"}

func (e Embedding) String() string {
	if e < 0 || int(e) >= len(embeddingNames) {
		return fmt.Sprintf("Embedding(%d)", int(e))
	}
	return embeddingNames[e]
}

// ParseEmbedding returns the Embedding named s ("independent" or "late");
// "" is Independent, as a manifest without the field reads.
func ParseEmbedding(s string) (Embedding, error) {
	if s == "" {
		return Independent, nil
	}
	for e, name := range embeddingNames {
		if s == name {
			return Embedding(e), nil
		}
	}
	return 0, fmt.Errorf("msrag: embedding %q: want independent or late", s)
}

// lateEmbedder checks that spec's model can be late-chunked and returns its
// TokenEmbedder, with the segment's content tokens and the overlap.
func lateEmbedder(e Embedder, overlap int) (embed.TokenEmbedder, int, int, error) {
	spec := e.Spec()
	switch spec.Pooling {
	case embed.PoolMean:
	case embed.PoolCLS:
		return nil, 0, 0, fmt.Errorf("msrag: late chunking pools the mean of a window's token vectors, but model %s's sentence vector is its [CLS] token's (cls pooling): a mean over tokens is not a vector this model was trained to make", spec.Name)
	default:
		return nil, 0, 0, fmt.Errorf("msrag: late chunking pools the mean of a window's token vectors, but model %s has %s pooling: it gives one vector per text, not one per token", spec.Name, spec.Pooling)
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
