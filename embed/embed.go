package embed

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/msrag/msrag/tokenizer"
)

// Role says what a text is for.
type Role int

const (
	Passage Role = iota // a passage (document chunk) to be retrieved
	Query               // a search query
)

func (r Role) String() string {
	switch r {
	case Passage:
		return "passage"
	case Query:
		return "query"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// ParseRole parses "query" or "passage".
func ParseRole(s string) (Role, error) {
	switch s {
	case "query":
		return Query, nil
	case "passage":
		return Passage, nil
	}
	return 0, fmt.Errorf("embed: role %q: want query or passage", s)
}

// Pooling names how a model turns its per-token output into one vector.
type Pooling string

// The poolings carry sentence-transformers' names (its Pooling module's
// pooling_mode), each computed as that module computes it over a sequence
// padded on the right.
const (
	PoolMean Pooling = "mean" // the mean of the token vectors under the attention mask
	PoolCLS  Pooling = "cls"  // the first token's vector
	PoolNone Pooling = "none" // the model outputs one vector per text
	// PoolMax is the largest value of each dimension over the tokens under
	// the attention mask.
	PoolMax Pooling = "max"
	// PoolMeanSqrtLen is the sum of the token vectors under the mask over
	// the square root of their count.
	PoolMeanSqrtLen Pooling = "mean_sqrt_len_tokens"
	// PoolLastToken is the vector of the last token under the mask.
	PoolLastToken Pooling = "lasttoken"
)

// Poolings lists the poolings an embedder can be described with.
var Poolings = []Pooling{PoolMean, PoolCLS, PoolMax, PoolMeanSqrtLen, PoolLastToken, PoolNone}

// Valid reports whether p is one of Poolings.
func (p Pooling) Valid() bool { return slices.Contains(Poolings, p) }

// Spec describes a model as plain data.
type Spec struct {
	// Name is the model's name, recorded in an index's manifest.
	Name string
	// Checksums maps the model's file names (model.onnx, tokenizer.json) to
	// their hex sha256; an index records them and refuses another model.
	Checksums map[string]string
	// Dims is the length of a vector.
	Dims int
	// MaxTokens is the most tokens the model takes in one sequence, prefix
	// and special tokens included.
	MaxTokens int
	// SpecialTokens is the number of special tokens put around a sequence
	// ([CLS] and [SEP] for BERT).
	SpecialTokens int
	// Pooling and Normalize say how a vector is made of the token outputs.
	Pooling   Pooling
	Normalize bool
	// QueryPrefix and PassagePrefix are put in front of texts of each role;
	// PrefixTokens holds their token counts, indexed by Role.
	QueryPrefix, PassagePrefix string
	PrefixTokens               [2]int
	// Precision is the precision the model runs in: "" for the model as
	// published (fp32 for the built-in ONNX models), or "fp16" for its
	// half-precision conversion, whose file's sum Checksums holds under its
	// own name (model_fp16.onnx). An index records it and is searched only
	// with a model of the same precision.
	Precision string
}

// Prefix returns the text put in front of texts of role r.
func (s Spec) Prefix(r Role) string {
	if r == Query {
		return s.QueryPrefix
	}
	return s.PassagePrefix
}

// MaxContent returns the most content tokens a sequence of role r can have:
// MaxTokens less the prefix and the special tokens.
func (s Spec) MaxContent(r Role) int {
	if r != Query && r != Passage {
		return 0
	}
	return s.MaxTokens - s.SpecialTokens - s.PrefixTokens[r]
}

// Clone returns a copy of s that shares no map with it.
func (s Spec) Clone() Spec {
	s.Checksums = maps.Clone(s.Checksums)
	return s
}

// Chunk is one window of a document to embed.
type Chunk struct {
	// IDs are the content token ids, as the model's tokenizer encodes the
	// text without special tokens: no prefix, no special tokens.
	IDs []int32
	// Text is the same content as text: the window's span of the document.
	Text string
}

// Embedder turns texts into vectors. Implementations must be safe for
// concurrent use.
type Embedder interface {
	// Spec describes the model.
	Spec() Spec
	// Tokenizer is the tokenizer whose token spans cut the windows; it must
	// be the model's own (or, for a model behind a server, one the caller
	// chose and recorded).
	Tokenizer() *tokenizer.Tokenizer
	// Embed embeds texts with the role's prefix, each truncated to what the
	// model takes: len(texts) rows of Spec().Dims float32, row-major.
	Embed(ctx context.Context, texts []string, role Role) ([]float32, error)
	// EmbedChunks embeds document chunks with the role's prefix; a chunk
	// longer than Spec().MaxContent(role) is an error, never truncated.
	EmbedChunks(ctx context.Context, chunks []Chunk, role Role) ([]float32, error)
	// Close releases the embedder's resources; it is safe to call twice.
	Close() error
}

// Pipelined is implemented by an Embedder whose calls gain from overlapping,
// such as one behind an embedding server: while one call waits for its last
// requests, the next keeps the server busy. A build keeps Calls()
// EmbedChunks calls in flight (at least one) and still adds their vectors
// in order.
type Pipelined interface {
	Embedder
	Calls() int
}
