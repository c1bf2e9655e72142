package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/msrag/msrag/internal/provenance"
	"github.com/msrag/msrag/internal/safefile"
)

// ManifestName is the manifest's file name inside an index directory.
const ManifestName = "manifest.json"

// FormatVersion is the on-disk format this code writes. Version 1 (the
// full-document window marked "full") is read too.
const FormatVersion = 2

// ErrMismatch is wrapped by errors about an index that does not match its
// manifest, its files or the model it is opened with.
var ErrMismatch = errors.New("index does not match")

// ModelInfo identifies the embedding model an index was built with.
type ModelInfo struct {
	Name            string `json:"name"`
	ModelSHA256     string `json:"model_sha256"`
	TokenizerSHA256 string `json:"tokenizer_sha256"`
	Dims            int    `json:"dims"`
	MaxTokens       int    `json:"max_tokens"`
	Pooling         string `json:"pooling"`
	Normalize       bool   `json:"normalize"`
	QueryPrefix     string `json:"query_prefix"`
	PassagePrefix   string `json:"passage_prefix"`
	// Remote describes a model behind an embedding server; it is absent
	// (the zero value) for an in-process model and in older manifests.
	Remote RemoteInfo `json:"remote,omitzero"`
}

// RemoteInfo describes a model behind an embedding server (package remote).
type RemoteInfo struct {
	// Kind is the API: "openai" (OpenAI-compatible) or "tei".
	Kind string `json:"kind"`
	// Model is the model the server reported.
	Model string `json:"model"`
	// Endpoints are the base URLs the build used, comma-separated, without
	// credentials. A search may use others serving the same model.
	Endpoints string `json:"endpoints"`
	// InputType says the server added the role prefixes itself, told by
	// "input_type"; otherwise msrag sent them in the text.
	InputType bool `json:"input_type,omitempty"`
	// Tokenizer is the path of the tokenizer.json that cut the windows, as
	// given to the build; its sha256 is ModelInfo.TokenizerSHA256.
	Tokenizer string `json:"tokenizer"`
	// TokenizerOrigin is "server" when that file is the server's own
	// tokenizer, "other" when it is another one (token counts were checked
	// against the server's either way).
	TokenizerOrigin string `json:"tokenizer_origin"`
	// ServerMaxTokens is the server's longest sequence and Headroom the
	// tokens windows were kept under it: ModelInfo.MaxTokens is their
	// difference.
	ServerMaxTokens int `json:"server_max_tokens"`
	Headroom        int `json:"headroom"`
}

// WindowInfo describes one window and its files.
type WindowInfo struct {
	// Size is the window's length in content tokens.
	Size int `json:"size"`
	// Stride is the step between window starts (0 for a Truncate window).
	Stride int `json:"stride"`
	// Truncate marks the window of each document's first Size tokens (the
	// "full" window); format 1 called it "full".
	Truncate bool `json:"truncate,omitempty"`
	// Tail says where a sliding window's last window of a document lies:
	// "aligned" (moved back to end at the document's end, Size tokens) or
	// "short" (where the stride puts it, fewer tokens); absent: "short", as
	// every index before the tail was recorded.
	Tail        string `json:"tail,omitempty"`
	Vectors     int64  `json:"vectors"`
	IndexFile   string `json:"index_file"`
	IndexSHA256 string `json:"index_sha256"`
	ChunksFile  string `json:"chunks_file"`
	ChunkSHA256 string `json:"chunks_sha256"`
}

// UnmarshalJSON reads a window of either format: version 1 wrote the
// Truncate window as "full": true.
func (w *WindowInfo) UnmarshalJSON(b []byte) error {
	type plain WindowInfo
	var v struct {
		plain
		Full bool `json:"full"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = WindowInfo(v.plain)
	w.Truncate = w.Truncate || v.Full
	return nil
}

// Manifest is manifest.json: what an index holds and how it was made.
type Manifest struct {
	FormatVersion int          `json:"format_version"`
	Model         ModelInfo    `json:"model"`
	Factory       string       `json:"factory"`
	Metric        string       `json:"metric"`
	Windows       []WindowInfo `json:"windows"`
	Docs          int64        `json:"docs"`
	DocsFile      string       `json:"docs_file"`
	DocsSHA256    string       `json:"docs_sha256"`
	UniqueChunks  int64        `json:"unique_chunks"`
	Tokens        int64        `json:"tokens"`
	Skipped       int64        `json:"skipped_docs"`
	Shard         string       `json:"shard,omitempty"`
	// Embedding is how the windows were embedded: "late", or "independent"
	// (or absent, as before it was recorded). Late describes a late build's
	// segments.
	Embedding    string    `json:"embedding"`
	Late         *LateInfo `json:"late,omitempty"`
	Created      time.Time `json:"created"`
	BuildSeconds float64   `json:"build_seconds"`
	// Inputs are the files the build read, with their sizes and sha256
	// (corpus.Inputs); absent for a corpus whose reader records none, and in
	// indices built before they were recorded.
	Inputs []Input `json:"inputs,omitempty"`
	// Batching is how the embedder grouped texts into model runs: "padded"
	// (length-sorted padded batches; absent in manifests written before it
	// was recorded) or "single" (one text per run, so a dynamically
	// quantized model's vectors do not depend on the batch); absent for an
	// embedder without the choice (a model behind a server).
	Batching string `json:"batching,omitempty"`
	// Build is the msrag build and library versions that wrote the index
	// (absent in manifests written before it was recorded).
	Build *provenance.Build `json:"build,omitempty"`
}

// Input is one file a build read: its path as given, size and sha256.
type Input struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// LateInfo describes the segments of a late-chunked index.
type LateInfo struct {
	// SegmentTokens is a segment's length in content tokens, SequenceTokens
	// with the prefix and the special tokens, Overlap the content tokens
	// consecutive segments share.
	SegmentTokens  int `json:"segment_tokens"`
	SequenceTokens int `json:"sequence_tokens"`
	Overlap        int `json:"overlap"`
	// Edges says which rows besides a window's tokens it pools: "segment"
	// (the prefix and leading special tokens when it starts its segment,
	// the trailing ones when it ends it).
	Edges string `json:"edges"`
}

// IsIndex reports whether dir holds a manifest.
func IsIndex(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ManifestName))
	return err == nil
}

// ReadManifest reads and checks dir's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	data, err := safefile.ReadSmall(path, maxManifest)
	if err != nil {
		return nil, fmt.Errorf("%s is not an index: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.FormatVersion != 1 && m.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s: format version %d, this msrag reads 1 and %d: %w", path, m.FormatVersion, FormatVersion, ErrMismatch)
	}
	if len(m.Windows) == 0 {
		return nil, fmt.Errorf("%s: no windows: %w", path, ErrMismatch)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// ErrBadManifest is wrapped by ReadManifest's errors for a manifest whose
// fields cannot describe an index (damaged or edited by hand).
var ErrBadManifest = errors.New("invalid manifest")

// maxManifest bounds a manifest's size: a few KiB in practice.
const maxManifest = 16 << 20

// maxDims bounds the vectors' dims a manifest may record.
const maxDims = 1 << 16

// validate checks every field the index is opened with: counts not negative,
// sizes positive, file names plain names inside the index directory, each
// window once. Errors name the field.
func (m *Manifest) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrBadManifest)
	}
	if m.Model.Dims <= 0 || m.Model.Dims > maxDims {
		return bad("model.dims %d, want 1 to %d", m.Model.Dims, maxDims)
	}
	if m.Model.MaxTokens < 0 {
		return bad("model.max_tokens %d is negative", m.Model.MaxTokens)
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"docs", m.Docs}, {"unique_chunks", m.UniqueChunks}, {"tokens", m.Tokens}, {"skipped_docs", m.Skipped}} {
		if c.v < 0 {
			return bad("%s %d is negative", c.name, c.v)
		}
	}
	files := map[string]string{}
	if err := plainFile(files, "docs_file", m.DocsFile); err != nil {
		return err
	}
	for i, w := range m.Windows {
		if err := w.validate(files, i); err != nil {
			return err
		}
	}
	if l := m.Late; l != nil && (l.SegmentTokens <= 0 || l.SequenceTokens < l.SegmentTokens || l.Overlap < 0 || l.Overlap >= l.SegmentTokens) {
		return bad("late: segment_tokens %d, sequence_tokens %d, overlap %d: want 0 <= overlap < segment_tokens <= sequence_tokens", l.SegmentTokens, l.SequenceTokens, l.Overlap)
	}
	return nil
}

// validate checks window i of a manifest; files collects the file names
// seen so far.
func (w WindowInfo) validate(files map[string]string, i int) error {
	field := fmt.Sprintf("windows[%d]", i)
	switch {
	case w.Size < 0 || w.Size == 0 && !w.Truncate:
		return fmt.Errorf("%s: size %d, want a positive number: %w", field, w.Size, ErrBadManifest)
	case w.Stride < 0 || w.Stride > w.Size:
		return fmt.Errorf("%s: stride %d, want 0 to the size %d: %w", field, w.Stride, w.Size, ErrBadManifest)
	case w.Vectors < 0:
		return fmt.Errorf("%s: vectors %d is negative: %w", field, w.Vectors, ErrBadManifest)
	case w.Tail != "" && w.Tail != "aligned" && w.Tail != "short":
		return fmt.Errorf("%s: tail %q, want aligned or short: %w", field, w.Tail, ErrBadManifest)
	}
	if err := plainFile(files, field+".index_file", w.IndexFile); err != nil {
		return err
	}
	return plainFile(files, field+".chunks_file", w.ChunksFile)
}

// plainFile fails unless name is a plain file name inside the index
// directory (no separator, not "." or "..", no control character) that no
// other field named.
func plainFile(files map[string]string, field, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsFunc(name, unicode.IsControl) {
		return fmt.Errorf("%s %q: want a plain file name inside the index directory: %w", field, name, ErrBadManifest)
	}
	if other, ok := files[name]; ok {
		return fmt.Errorf("%s %q: also %s: %w", field, name, other, ErrBadManifest)
	}
	files[name] = field
	return nil
}

func encodeManifest(m *Manifest) ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the manifest: %w", err)
	}
	return append(data, '\n'), nil
}
