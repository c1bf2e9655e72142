package msrag

import (
	"context"
	"fmt"
	"sync"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/internal/provenance"
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

// QueryCache is an Embedder that remembers the query vectors of another by
// text, so that runs searching the same queries (one per embedding mode,
// say) search them with the same vectors and embed them once. Everything
// but query embedding passes through to the embedder it wraps; give it as
// BatchOptions.Queries, not to a build. Safe for concurrent use.
type QueryCache struct {
	Embedder
	mu   sync.Mutex
	vecs map[string][]float32
}

// NewQueryCache wraps e.
func NewQueryCache(e Embedder) *QueryCache {
	return &QueryCache{Embedder: e, vecs: map[string][]float32{}}
}

// Embed returns the remembered vectors of queries and embeds the others.
// Texts not held are embedded as a plain run would embed them, repeats
// included, so that an int8 model (whose vectors depend slightly on the
// batch) gives the vectors a plain run gives. Other roles pass through.
func (c *QueryCache) Embed(ctx context.Context, texts []string, role embed.Role) ([]float32, error) {
	if role != embed.Query {
		return c.Embedder.Embed(ctx, texts, role)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for _, t := range texts {
		if _, ok := c.vecs[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		vecs, err := c.Embedder.Embed(ctx, missing, role)
		if err != nil {
			return nil, err
		}
		dims := len(vecs) / len(missing)
		for i, t := range missing {
			c.vecs[t] = vecs[i*dims : (i+1)*dims : (i+1)*dims]
		}
	}
	var out []float32
	for _, t := range texts {
		out = append(out, c.vecs[t]...)
	}
	return out, nil
}

// Len returns the number of queries remembered.
func (c *QueryCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vecs)
}

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

// BuildInfo says what produced a result: msrag's module version, source
// revision and whether the tree was modified, the Go toolchain, and the
// ONNX Runtime and FAISS versions. Manifests, results.json and MTEB result
// files record it.
type BuildInfo = provenance.Build

// CurrentBuild returns this process's BuildInfo: the binary's build
// information and the versions the native libraries report. ONNX Runtime's
// is empty until a model has been opened (the first one loads the library),
// and without package onnx imported (it registers the reporter).
func CurrentBuild() BuildInfo {
	return provenance.Current(provenance.Libraries{
		ONNXRuntime: provenance.RuntimeVersion("onnxruntime"), FAISS: faiss.Version(), FAISSOptions: faiss.CompileOptions(),
	})
}
