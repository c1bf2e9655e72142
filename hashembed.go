package msrag

import (
	"context"
	"fmt"
	"math"

	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/tokenizer"
)

// HashEmbedderName is the model name HashEmbedder records in an index manifest.
const HashEmbedderName = "hash-test-embedder"

// HashEmbedder is a NON-SEMANTIC embedder for tests and scale runs of the
// pipeline: every token id maps to a fixed pseudo-random unit vector and a text's
// vector is the normalised mean of its tokens' vectors. It tokenizes exactly as
// the model it stands in for, so chunking, batching and indexing do the same work,
// but its vectors carry no meaning beyond shared tokens: never use it for quality
// numbers. It is fast (no model) and deterministic (fixed seed).
type HashEmbedder struct {
	tok       *tokenizer.Tokenizer
	tokSHA    string
	dims      int
	maxTokens int
	seed      uint64
}

// NewHashEmbedder returns a HashEmbedder over the tokenizer file at path with
// vectors of dims (0 means 64) and a maximum of maxTokens tokens (0 means 512).
func NewHashEmbedder(tokenizerPath string, dims, maxTokens int) (*HashEmbedder, error) {
	tok, err := tokenizer.Load(tokenizerPath)
	if err != nil {
		return nil, fmt.Errorf("msrag: hash embedder: %w", err)
	}
	sum, err := fileSHA256(tokenizerPath)
	if err != nil {
		return nil, fmt.Errorf("msrag: hash embedder: %w", err)
	}
	if dims <= 0 {
		dims = 64
	}
	if maxTokens <= 0 {
		maxTokens = 512
	}
	return &HashEmbedder{tok: tok, tokSHA: sum, dims: dims, maxTokens: maxTokens, seed: 0x6d73726167}, nil
}

// Info describes the embedder as a model.
func (h *HashEmbedder) Info() onnx.ModelInfo {
	return onnx.ModelInfo{
		Name:        HashEmbedderName,
		Description: "non-semantic token-hash vectors, for pipeline tests only",
		Dims:        h.dims,
		MaxTokens:   h.maxTokens,
		Pooling:     onnx.PoolMean,
		Normalize:   true,
	}
}

func (h *HashEmbedder) Dims() int                       { return h.dims }
func (h *HashEmbedder) MaxTokens() int                  { return h.maxTokens }
func (h *HashEmbedder) PrefixTokens(onnx.Role) int      { return 0 }
func (h *HashEmbedder) Tokenizer() *tokenizer.Tokenizer { return h.tok }

// Checksums names the tokenizer; there is no model file.
func (h *HashEmbedder) Checksums() map[string]string {
	return map[string]string{"tokenizer.json": h.tokSHA, "model.onnx": "none"}
}

// Embed tokenizes texts, truncated to the maximum length, and embeds them.
func (h *HashEmbedder) Embed(ctx context.Context, texts []string, role onnx.Role) ([]float32, error) {
	limit := h.maxTokens - h.tok.NumSpecialTokens()
	seqs := make([][]int32, len(texts))
	for i, t := range texts {
		ids := h.tok.EncodeWith(t, tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
		if len(ids) > limit {
			ids = ids[:limit]
		}
		seqs[i] = ids
	}
	return h.EmbedTokens(ctx, seqs, role)
}

// EmbedTokens embeds content token ids.
func (h *HashEmbedder) EmbedTokens(ctx context.Context, seqs [][]int32, _ onnx.Role) ([]float32, error) {
	limit := h.maxTokens - h.tok.NumSpecialTokens()
	out := make([]float32, len(seqs)*h.dims)
	for i, ids := range seqs {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(ids) > limit {
			return nil, fmt.Errorf("msrag: hash embedder: sequence %d has %d tokens, more than the %d that fit", i, len(ids), limit)
		}
		row := out[i*h.dims : (i+1)*h.dims]
		for _, id := range ids {
			s := h.seed ^ (uint64(uint32(id)) * 0x9e3779b97f4a7c15)
			for d := range row {
				s = splitmix(s)
				row[d] += float32(int32(s>>32)) * (1.0 / (1 << 31))
			}
		}
		var n float64
		for _, v := range row {
			n += float64(v) * float64(v)
		}
		if n > 0 {
			inv := float32(1 / math.Sqrt(n))
			for d := range row {
				row[d] *= inv
			}
		}
	}
	return out, nil
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
