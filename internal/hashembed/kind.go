package hashembed

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/msrag/msrag/embed"
)

// KindName is the kind's name in package embed's registry.
const KindName = "hash"

// origin is the kind's parameters: the vector size and the longest sequence.
type origin struct {
	Dims      int `json:"dims"`
	MaxTokens int `json:"max_tokens"`
}

// Kind is the hash embedder as a kind of package embed's registry: it claims
// the name Name and opens a Hash of 64 dims and 512 tokens over the
// tokenizer file that tokenizer returns (whoever registers it chooses which).
func Kind(tokenizer func() (string, error)) embed.Kind {
	open := func(o origin) (embed.Embedder, error) {
		path, err := tokenizer()
		if err != nil {
			return nil, fmt.Errorf("hashembed: %s: %w", Name, err)
		}
		h, err := NewHash(path, o.Dims, o.MaxTokens)
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	return embed.Kind{
		Name:   KindName,
		Claims: func(name string) bool { return name == Name },
		Open: func(context.Context, string, embed.Options) (embed.Embedder, error) {
			return open(origin{})
		},
		Reopen: func(_ context.Context, or embed.Origin, _ embed.Options) (embed.Embedder, error) {
			var o origin
			if or.Params != "" {
				if err := json.Unmarshal([]byte(or.Params), &o); err != nil {
					return nil, fmt.Errorf("hashembed: origin parameters %s: %w", or.Params, err)
				}
			}
			return open(o)
		},
	}
}

// Origin says how to open the embedder again: its size (embed.Originer).
func (h *Hash) Origin() embed.Origin {
	b, _ := json.Marshal(origin{Dims: h.dims, MaxTokens: h.maxTokens}) // ints always encode
	return embed.Origin{Kind: KindName, Params: string(b)}
}

var _ embed.Originer = (*Hash)(nil)
