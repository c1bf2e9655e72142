// Package hashembed holds the hash test embedder, for tests and pipeline
// measurements, never for retrieval quality: [Hash] gives every token a fixed
// pseudo-random vector, so it exercises tokenizing, chunking, batching and
// indexing exactly as a model would while costing almost nothing. Its
// tokenizer is the caller's: [NewHash] takes the file, and [Kind] a function
// that finds it for the model called [Name].
package hashembed

import (
	"context"
	"fmt"
	"math"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/tokenizer"
)

// Name is the model name a Hash embedder records in an index manifest, and
// the name the command line takes for it (--model hash-test-embedder).
const Name = "hash-test-embedder"

// Hash is a NON-SEMANTIC embedder: every token id maps to a fixed
// pseudo-random unit vector and a text's vector is the normalised mean of its
// tokens' vectors. It tokenizes exactly as the model whose tokenizer it uses,
// but its vectors carry no meaning beyond shared tokens. It is deterministic
// (fixed seed) and safe for concurrent use.
type Hash struct {
	tok       *tokenizer.Tokenizer
	tokSHA    string
	dims      int
	maxTokens int
	seed      uint64
}

// NewHash returns a Hash embedder over the tokenizer file at path with vectors
// of dims (0 means 64) and a maximum of maxTokens tokens (0 means 512).
func NewHash(tokenizerPath string, dims, maxTokens int) (*Hash, error) {
	tok, err := tokenizer.Load(tokenizerPath)
	if err != nil {
		return nil, fmt.Errorf("hashembed: %w", err)
	}
	sum, err := safefile.SHA256(tokenizerPath)
	if err != nil {
		return nil, fmt.Errorf("hashembed: %w", err)
	}
	if dims <= 0 {
		dims = 64
	}
	if maxTokens <= 0 {
		maxTokens = 512
	}
	return &Hash{tok: tok, tokSHA: sum, dims: dims, maxTokens: maxTokens, seed: 0x6d73726167}, nil
}

// Spec describes the embedder as a model.
func (h *Hash) Spec() embed.Spec {
	return embed.Spec{
		Name:          Name,
		Checksums:     map[string]string{"tokenizer.json": h.tokSHA, "model.onnx": "none"},
		Dims:          h.dims,
		MaxTokens:     h.maxTokens,
		SpecialTokens: h.tok.NumSpecialTokens(),
		Pooling:       embed.PoolMean,
		Normalize:     true,
	}
}

// Tokenizer returns the tokenizer.
func (h *Hash) Tokenizer() *tokenizer.Tokenizer { return h.tok }

// Close does nothing.
func (h *Hash) Close() error { return nil }

// Embed tokenizes texts, truncated to the maximum length, and embeds them.
func (h *Hash) Embed(ctx context.Context, texts []string, role embed.Role) ([]float32, error) {
	limit := h.Spec().MaxContent(role)
	chunks := make([]embed.Chunk, len(texts))
	for i, t := range texts {
		ids := h.tok.EncodeWith(t, tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
		chunks[i] = embed.Chunk{IDs: ids[:min(len(ids), limit)], Text: t}
	}
	return h.EmbedChunks(ctx, chunks, role)
}

// EmbedChunks embeds chunks from their token ids.
func (h *Hash) EmbedChunks(ctx context.Context, chunks []embed.Chunk, role embed.Role) ([]float32, error) {
	limit := h.Spec().MaxContent(role)
	out := make([]float32, len(chunks)*h.dims)
	for i, c := range chunks {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if len(c.IDs) > limit {
			return nil, fmt.Errorf("hashembed: chunk %d has %d tokens, more than the %d that fit", i, len(c.IDs), limit)
		}
		h.vector(out[i*h.dims:(i+1)*h.dims], c.IDs)
	}
	return out, nil
}

// EmbedTokenStates hands fn each sequence's token vectors: one per content
// token, no prefix or special tokens (embed.TokenEmbedder). A window's mean
// of them, normalised, is its vector from EmbedChunks.
func (h *Hash) EmbedTokenStates(ctx context.Context, seqs [][]int32, role embed.Role, fn func(int, embed.TokenStates) error) error {
	limit := h.Spec().MaxContent(role)
	for i, ids := range seqs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(ids) > limit {
			return fmt.Errorf("hashembed: sequence %d has %d tokens, more than the %d that fit", i, len(ids), limit)
		}
		rows := make([]float32, len(ids)*h.dims)
		for j, id := range ids {
			h.add(rows[j*h.dims:(j+1)*h.dims], id)
		}
		if err := fn(i, embed.TokenStates{Rows: rows, Content: len(ids)}); err != nil {
			return err
		}
	}
	return nil
}

// add adds token id's vector to row.
func (h *Hash) add(row []float32, id int32) {
	s := h.seed ^ (uint64(uint32(id)) * 0x9e3779b97f4a7c15)
	for d := range row {
		s = splitmix(s)
		row[d] += float32(int32(s>>32)) * (1.0 / (1 << 31))
	}
}

// vector writes the normalised sum of the tokens' vectors into row.
func (h *Hash) vector(row []float32, ids []int32) {
	for _, id := range ids {
		h.add(row, id)
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

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

var _ embed.TokenEmbedder = (*Hash)(nil)
