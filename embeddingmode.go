package msrag

import "fmt"

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
