package msrag

import (
	"context"
	"fmt"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/indexfile"
)

// Embedder embeds queries and document chunks: the model behind an index.
// Package embed states the contract and keeps the registry of embedder kinds
// (the in-process ONNX model of package onnx, a model behind an embedding
// server of package remote, ...); any type outside msrag may implement it.
type Embedder = embed.Embedder

// OpenEmbedder opens the model called name with the registered kind that
// claims it (embed.Open): "openai:URL[#MODEL]" or "tei:URL" a model behind a
// server, any other name or a model directory the in-process ONNX model. The
// kinds are registered by importing their packages (github.com/msrag/msrag/
// embedders imports every built-in one); msrag itself imports none. The
// caller closes it.
func OpenEmbedder(ctx context.Context, name string, opts embed.Options) (Embedder, error) {
	e, err := embed.Open(ctx, name, opts)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	return e, nil
}

// ReopenEmbedder opens the model an index's manifest records: from its
// origin with the kind that made it (embed.Reopen), or, for a manifest
// without one (an in-process model before format 3, an embedder that
// reports no origin), by its name. opts may say how to reach it otherwise
// (for a server: other endpoints, another path of the same tokenizer, in
// opts.Extra). The caller closes it; checking it against the index is
// Open's business.
func ReopenEmbedder(ctx context.Context, m ModelInfo, opts embed.Options) (Embedder, error) {
	if m.None() {
		return nil, fmt.Errorf("msrag: the index has no model (built with --model none): its queries are not embedded: %w", ErrNoModel)
	}
	if m.Origin.Kind == "" {
		return OpenEmbedder(ctx, m.Name, opts)
	}
	o := embed.Origin{Kind: m.Origin.Kind, Params: string(m.Origin.Params), Access: string(m.Origin.Access)}
	e, err := embed.Reopen(ctx, o, opts)
	if err != nil {
		return nil, fmt.Errorf("msrag: reopening model %s: %w", m.Name, err)
	}
	return e, nil
}

// EmbedderDevices reports whether the model m records runs on a device of
// this machine that embed.Options.Device chooses (embed.Kind.Devices):
// false for an index without a model, a model behind a server, or a kind
// not registered.
func EmbedderDevices(m ModelInfo) bool {
	if m.None() {
		return false
	}
	return embed.Devices(embed.Origin{Kind: m.Origin.Kind}, m.Name)
}

// modelInfoOf records what the index manifest keeps of an embedder: its
// Spec, and its origin when it reports one. Origin parameters that are not
// JSON objects (a kind's mistake) are kept as given; writing the manifest
// then fails, naming them.
func modelInfoOf(e Embedder) ModelInfo {
	s := e.Spec()
	m := ModelInfo{
		Name:            s.Name,
		ModelSHA256:     s.Checksums["model.onnx"],
		TokenizerSHA256: s.Checksums["tokenizer.json"],
		Dims:            s.Dims,
		MaxTokens:       s.MaxTokens,
		Pooling:         string(s.Pooling),
		Normalize:       s.Normalize,
		QueryPrefix:     s.QueryPrefix,
		PassagePrefix:   s.PassagePrefix,
		Precision:       s.Precision,
	}
	if m.ModelSHA256 == "" && s.Precision == "fp16" {
		m.ModelSHA256 = s.Checksums["model_fp16.onnx"]
	}
	if o, ok := embed.OriginOf(e); ok {
		m.Origin = indexfile.Origin{Kind: o.Kind, Params: originParams(o.Params), Access: originParams(o.Access)}
	}
	return m
}

// originParams returns the canonical Params of a JSON object's text, or the text
// itself when it is not one.
func originParams(s string) indexfile.Params {
	p, err := indexfile.ParseParams(s)
	if err != nil {
		return indexfile.Params(s)
	}
	return p
}

// EmbedderBatching is what a manifest records as e's batching: "padded" or
// "single" for an embedder that reports it (embed.BatchingReporter: the
// ONNX model, auto resolved), "" for an embedder without the choice.
func EmbedderBatching(e Embedder) string {
	if b, ok := e.(embed.BatchingReporter); ok {
		return b.BatchingMode()
	}
	return ""
}

// recordedBatching is a manifest's batching, "padded" where it is absent:
// every ONNX build before it was recorded ran padded batches, and an
// embedder without the choice has nothing to disagree about.
func recordedBatching(m *Manifest) string {
	if m.Batching == "" {
		return embed.BatchingPadded
	}
	return m.Batching
}
