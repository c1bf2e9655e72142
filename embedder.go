package msrag

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/tokenizer"
)

// Embedder turns texts, or already tokenized texts, into vectors. *onnx.Embedder
// is the real one; HashEmbedder is a fast, non-semantic one for tests.
type Embedder interface {
	// Info describes the model: name, dims, maximum length, pooling, prefixes.
	Info() onnx.ModelInfo
	// Dims is the length of a vector.
	Dims() int
	// MaxTokens is the most tokens the model takes, prefix and special tokens included.
	MaxTokens() int
	// PrefixTokens is the number of tokens of the role's prefix.
	PrefixTokens(role onnx.Role) int
	// Tokenizer is the model's tokenizer.
	Tokenizer() *tokenizer.Tokenizer
	// Checksums maps the model's file names to their sha256.
	Checksums() map[string]string
	// Embed embeds texts (the role's prefix is added), one row of Dims() per text.
	Embed(ctx context.Context, texts []string, role onnx.Role) ([]float32, error)
	// EmbedTokens embeds content token ids (no prefix, no special tokens).
	EmbedTokens(ctx context.Context, seqs [][]int32, role onnx.Role) ([]float32, error)
}

var _ Embedder = (*onnx.Embedder)(nil)

// modelInfoOf records what the index manifest keeps of an embedder.
func modelInfoOf(e Embedder) ModelInfo {
	info := e.Info()
	sums := e.Checksums()
	return ModelInfo{
		Name:            info.Name,
		ModelSHA256:     sums["model.onnx"],
		TokenizerSHA256: sums["tokenizer.json"],
		Dims:            e.Dims(),
		MaxTokens:       e.MaxTokens(),
		Pooling:         string(info.Pooling),
		Normalize:       info.Normalize,
		QueryPrefix:     info.QueryPrefix,
		PassagePrefix:   info.PassagePrefix,
	}
}

var _ Embedder = (*onnx.Pool)(nil)

// OpenEmbedder opens the embedder called name: HashEmbedderName (the
// non-semantic test embedder, over the tokenizer of the all-minilm-l6-v2 model in
// the cache, 64 dims), or a model name or directory for onnx.ResolveModel.
// With gpus and opts.Device "cuda" or "auto", the model gets one session per
// GPU with the batches handed out round-robin (onnx.OpenPool); with device
// "cpu" gpus are ignored here (they may still hold the FAISS indices).
func OpenEmbedder(name string, opts onnx.Options, gpus ...int) (Embedder, error) {
	if name == HashEmbedderName {
		dir, err := onnx.ResolveModel(hashTokenizerModel)
		if err != nil {
			return nil, fmt.Errorf("msrag: %s uses the tokenizer of %s: %w", HashEmbedderName, hashTokenizerModel, err)
		}
		return NewHashEmbedder(filepath.Join(dir, onnx.TokenizerFile), 0, 0)
	}
	dir, err := onnx.ResolveModel(name)
	if err != nil {
		return nil, err
	}
	if len(gpus) > 0 && (opts.Device == onnx.DeviceCUDA || opts.Device == onnx.DeviceAuto) {
		return onnx.OpenPool(dir, opts, gpus)
	}
	return onnx.Open(dir, opts)
}

// hashTokenizerModel is the model whose tokenizer the hash test embedder uses
// when opened by name.
const hashTokenizerModel = "all-minilm-l6-v2"
