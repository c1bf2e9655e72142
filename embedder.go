package msrag

import (
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/onnx"
)

// Embedder embeds queries and document chunks: the model behind an index.
// Package embed states the contract; *onnx.Embedder and *onnx.Pool (opened by
// OpenEmbedder) implement it, and so can any type outside msrag.
type Embedder = embed.Embedder

// OpenEmbedder opens a model by name (a built-in or fetched model, see onnx.
// ResolveModel) or model directory with ONNX Runtime. With gpus and
// opts.Device "cuda" or "auto", the model gets one session per GPU with the
// batches handed out round-robin (onnx.OpenPool); with device "cpu" gpus are
// ignored here (they may still hold the FAISS indices). The caller closes it.
func OpenEmbedder(name string, opts onnx.Options, gpus ...int) (Embedder, error) {
	dir, err := onnx.ResolveModel(name)
	if err != nil {
		return nil, err
	}
	if len(gpus) > 0 && (opts.Device == onnx.DeviceCUDA || opts.Device == onnx.DeviceAuto) {
		return onnx.OpenPool(dir, opts, gpus)
	}
	return onnx.Open(dir, opts)
}

// modelInfoOf records what the index manifest keeps of an embedder.
func modelInfoOf(e Embedder) ModelInfo {
	s := e.Spec()
	return store.ModelInfo{
		Name:            s.Name,
		ModelSHA256:     s.Checksums["model.onnx"],
		TokenizerSHA256: s.Checksums["tokenizer.json"],
		Dims:            s.Dims,
		MaxTokens:       s.MaxTokens,
		Pooling:         string(s.Pooling),
		Normalize:       s.Normalize,
		QueryPrefix:     s.QueryPrefix,
		PassagePrefix:   s.PassagePrefix,
	}
}
