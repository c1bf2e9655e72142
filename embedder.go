package msrag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/remote"
)

// Embedder embeds queries and document chunks: the model behind an index.
// Package embed states the contract; *onnx.Embedder and *onnx.Pool (opened by
// OpenEmbedder) and *remote.Embedder (a model behind an embedding server)
// implement it, and so can any type outside msrag.
type Embedder = embed.Embedder

// OpenEmbedder opens a model by name (a built-in or fetched model, see onnx.
// ResolveModel) or model directory with ONNX Runtime. A built-in model is
// fetched into the cache on its first use (onnx.EnsureModel, saying so on
// opts.Log) unless opts.Offline or $MSRAG_OFFLINE forbid it. With gpus and
// opts.Device "cuda" or "auto", the model gets one session per GPU with the
// batches handed out round-robin (onnx.OpenPool); with device "cpu" gpus are
// ignored here (they may still hold the FAISS indices). The caller closes it.
func OpenEmbedder(name string, opts onnx.Options, gpus ...int) (Embedder, error) {
	dir, err := onnx.EnsureModel(context.Background(), name, onnx.FetchOptions{Log: opts.Log, Offline: opts.Offline})
	if err != nil {
		return nil, err
	}
	if len(gpus) > 0 && (opts.Device == onnx.DeviceCUDA || opts.Device == onnx.DeviceAuto) {
		return onnx.OpenPool(dir, opts, gpus)
	}
	return onnx.Open(dir, opts)
}

// RemoteOptions say how to reach the server of an index built with a model
// behind one again (OpenRemoteEmbedder).
type RemoteOptions struct {
	// Endpoints are the base URLs to use; nil: those the manifest recorded.
	// The server may move (a fleet, a new port); the model may not.
	Endpoints []string
	// Tokenizer is the tokenizer.json to use; "": the path the manifest
	// recorded. Its sha256 must be the recorded one either way.
	Tokenizer string
	// Client holds the rest of the client's settings (API key, concurrency,
	// retries, log); its Kind, Endpoints and Model are set from the manifest.
	Client remote.Options
}

// OpenRemoteEmbedder opens the model behind a server that m (an index's
// manifest model, m.Remote set) records: the same API kind, model, role
// prefixes or input_type, maximum length and tokenizer. The caller closes it;
// checking it against the index is Open's business.
func OpenRemoteEmbedder(ctx context.Context, m ModelInfo, o RemoteOptions) (Embedder, error) {
	r := m.Remote
	if r.Kind == "" {
		return nil, fmt.Errorf("msrag: model %q is not behind a server", m.Name)
	}
	kind, err := remote.ParseKind(r.Kind)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	co := o.Client
	co.Kind, co.Model, co.Endpoints = kind, r.Model, o.Endpoints
	if len(co.Endpoints) == 0 {
		co.Endpoints = strings.Split(r.Endpoints, ",")
	}
	tok := o.Tokenizer
	if tok == "" {
		tok = r.Tokenizer
	}
	e, err := remote.NewEmbedder(ctx, remote.EmbedderOptions{
		Client: co, Tokenizer: tok, ServerTokenizer: r.TokenizerOrigin == "server", MaxTokens: r.ServerMaxTokens,
		Headroom:    recordedHeadroom(r.Headroom),
		QueryPrefix: m.QueryPrefix, PassagePrefix: m.PassagePrefix, InputType: r.InputType, Dims: m.Dims,
		NoNormalize: !m.Normalize,
	})
	if err != nil {
		if o.Tokenizer == "" && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("msrag: reopening model %s: the tokenizer the index recorded, %s, is not there (an index built before paths were recorded absolute keeps the path as typed); give it with --tokenizer (RemoteOptions.Tokenizer): %w",
				m.Name, r.Tokenizer, err)
		}
		return nil, fmt.Errorf("msrag: reopening model %s: %w", m.Name, err)
	}
	return e, nil
}

// recordedHeadroom turns a manifest's headroom into the option that gives it
// again: 0 (none) is a negative option, since the option's 0 is the default.
func recordedHeadroom(h int) int {
	if h == 0 {
		return -1
	}
	return h
}

// modelInfoOf records what the index manifest keeps of an embedder.
func modelInfoOf(e Embedder) ModelInfo {
	s := e.Spec()
	m := store.ModelInfo{
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
	if r, ok := e.(*remote.Embedder); ok {
		sv := r.Served()
		m.Remote = store.RemoteInfo{Kind: sv.Kind.String(), Model: sv.Model, Endpoints: strings.Join(sv.Endpoints, ","),
			InputType: sv.InputType, Tokenizer: sv.Tokenizer, TokenizerOrigin: "other", ServerMaxTokens: sv.MaxTokens,
			Headroom: sv.Headroom}
		if sv.ServerTokenizer {
			m.Remote.TokenizerOrigin = "server"
		}
	}
	return m
}

// EmbedderBatching is what a manifest records as e's batching: "padded" or
// "single" for an ONNX model (onnx.Batching, auto resolved), "" for an
// embedder without the choice.
func EmbedderBatching(e Embedder) string {
	if b, ok := e.(interface{ Batching() onnx.Batching }); ok {
		return b.Batching().String()
	}
	return ""
}

// recordedBatching is a manifest's batching, "padded" where it is absent:
// every ONNX build before it was recorded ran padded batches, and an
// embedder without the choice has nothing to disagree about.
func recordedBatching(m *Manifest) string {
	if m.Batching == "" {
		return onnx.BatchingPadded.String()
	}
	return m.Batching
}

// Batching is how the index's texts were grouped into model runs: "padded"
// or "single" (see [EmbedderBatching]); "padded" for an index whose manifest
// predates the record.
func (ix *Index) Batching() string { return recordedBatching(ix.man) }

// sameModel reports whether two manifests name the same model, whatever
// endpoints and tokenizer path a model behind a server was reached by.
func sameModel(a, b ModelInfo) bool {
	a.Remote.Endpoints, b.Remote.Endpoints = "", ""
	a.Remote.Tokenizer, b.Remote.Tokenizer = "", ""
	return a == b
}
