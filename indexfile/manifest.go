package indexfile

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/msrag/msrag/chunk"
)

// ManifestName is the manifest's file name inside an index directory.
const ManifestName = "manifest.json"

// FormatVersion is the on-disk format this msrag writes for an index with
// dense windows. Versions 1 and 2 are read too (see the package
// documentation).
const FormatVersion = 3

// NoModelFormatVersion is the format of an index without dense windows
// (ModelInfo.None), the newest this msrag reads: an msrag that reads only
// formats 1 to 3 refuses such an index by its version instead of failing on
// its missing vectors. An index with dense windows is still written as
// FormatVersion, which every msrag since the origin was recorded reads.
const NoModelFormatVersion = 4

// ChannelsFormatVersion is the format of an index with channels of a kind
// beyond dense and lexical (Manifest.Channels), the newest this msrag reads:
// an msrag that does not know such kinds refuses the index by its version.
const ChannelsFormatVersion = 5

// ErrMismatch is wrapped by errors about an index that does not match its
// manifest, its files or the model it is opened with.
var ErrMismatch = errors.New("index does not match")

// ErrUnknownKind is wrapped by the error for an index whose channels are of
// a kind this msrag does not know.
var ErrUnknownKind = errors.New("unknown kind of channel")

// NoModel is the model name and origin kind of an index without dense
// windows: its windows were cut by a tokenizer alone (ModelInfo's
// TokenizerSHA256) and hold lexical windows only.
const NoModel = "none"

// Manifest is manifest.json: what an index holds and how it was made.
type Manifest struct {
	// FormatVersion is the format the index was written in (1 to 3, or 4
	// for an index without dense windows).
	FormatVersion int `json:"format_version"`
	// Model is the embedding model the windows were embedded with; in an
	// index without dense windows its name and origin kind are NoModel and
	// it records only the tokenizer that cut the windows (ModelInfo.None).
	Model ModelInfo `json:"model"`
	// Factory is the FAISS index factory string ("Flat", "HNSW32", ...)
	// and Metric its metric ("ip" or "l2"); both "" without dense windows.
	Factory string `json:"factory"`
	Metric  string `json:"metric"`
	// Windows are the index's windows, each with its files.
	Windows []WindowInfo `json:"windows"`
	// Docs is the number of documents, listed in DocsFile (docs.parquet)
	// whose sha256 is DocsSHA256.
	Docs       int64  `json:"docs"`
	DocsFile   string `json:"docs_file"`
	DocsSHA256 string `json:"docs_sha256"`
	// UniqueChunks is the number of distinct chunks embedded, Tokens the
	// documents' content tokens, Skipped the documents left out (empty).
	UniqueChunks int64 `json:"unique_chunks"`
	Tokens       int64 `json:"tokens"`
	Skipped      int64 `json:"skipped_docs"`
	// Shard names the part of a corpus this index holds ("2/4"), if any.
	Shard string `json:"shard,omitempty"`
	// Embedding is how the windows were embedded: "late", or "independent"
	// (or absent, as before it was recorded), or NoModel for an index
	// without dense windows. Late describes a late build's segments.
	Embedding string    `json:"embedding"`
	Late      *LateInfo `json:"late,omitempty"`
	// Lexical describes the lexical (BM25) windows: absent in an index built
	// without them (before they existed, or with lexical windows off).
	Lexical *LexicalInfo `json:"lexical,omitempty"`
	// Channels holds, by kind name, the record of every kind of channel
	// beyond dense and lexical (package channel): its parameters and
	// files, as the kind writes them. Present only in format 5.
	Channels map[string]json.RawMessage `json:"channels,omitempty"`
	// Created is when the build finished, BuildSeconds how long it took.
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
	Build *Build `json:"build,omitempty"`
	// Rebuildable marks an index an evaluation built for itself (msrag
	// eval's OUT/index): a later evaluation that it does not fit may build
	// it again. Any other index is replaced only when asked.
	Rebuildable bool `json:"rebuildable,omitempty"`
}

// Input is one file a build read: its path as given, size and sha256, and
// its modification time when the build read it (RFC 3339; absent before it
// was recorded), which lets a reader trust an unchanged file without
// hashing it again.
type Input struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	MTime  string `json:"mtime,omitempty"`
	// Shared marks a file that every shard of a sharded build reads whole,
	// keeping its part (a JSONL file read with --shard i/n): the shards of
	// one corpus all record it, alike. A file of a directory is one shard's
	// own (absent: false, as in manifests written before it was recorded).
	Shared bool `json:"shared,omitempty"`
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
	Tail string `json:"tail,omitempty"`
	// Vectors is the number of vectors (chunks) of the window; in an index
	// without dense windows, the number of chunks (rows of ChunksFile).
	Vectors int64 `json:"vectors"`
	// IndexFile is the window's FAISS index and ChunksFile its chunk table
	// (a row per vector: document, token span), each with its sha256.
	// IndexFile and IndexSHA256 are "" in an index without dense windows.
	IndexFile   string `json:"index_file"`
	IndexSHA256 string `json:"index_sha256"`
	ChunksFile  string `json:"chunks_file"`
	ChunkSHA256 string `json:"chunks_sha256"`
}

// Window is the chunk.Window the entry describes: the one conversion
// between the file's fields and a window.
func (w WindowInfo) Window() chunk.Window {
	if w.Truncate {
		return chunk.Window{Size: w.Size, Truncate: true}
	}
	out := chunk.Window{Size: w.Size, ShortTail: w.Tail != TailAligned}
	if w.Stride != w.Size {
		out.Stride = w.Stride
	}
	return out
}

// Tails a manifest records.
const (
	TailAligned = "aligned"
	TailShort   = "short"
)

// TailOf is what a manifest records of a window's tail ("" for the full
// window and the whole documents).
func TailOf(w chunk.Window) string {
	switch {
	case w.Truncate || w == chunk.Window{}:
		return ""
	case w.ShortTail:
		return TailShort
	}
	return TailAligned
}

// StrideOf is what a manifest records as a window's stride: its step, 0
// for the full window.
func StrideOf(w chunk.Window) int {
	if w.Truncate {
		return 0
	}
	return w.Step()
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

// LexicalInfo describes an index's lexical windows: a BM25 inverted index
// (package lexical's file format) over the chunk rows of every window, and
// one over the whole documents.
type LexicalInfo struct {
	// Analyzer is the analyzer that made the terms: its name and version
	// (lexical.Identity). An index is searched only by a build whose
	// analyzer of that name has that version.
	Analyzer AnalyzerInfo `json:"analyzer"`
	// K1 and B are the BM25 parameters the lexical windows score with.
	K1 float64 `json:"k1"`
	B  float64 `json:"b"`
	// Windows are parallel to Manifest.Windows: window i's lexical index has
	// a row per row of that window's chunk table.
	Windows []LexicalFile `json:"windows"`
	// Doc is the whole-document lexical index: a row per document, in the
	// order of the document table, over each document's whole text.
	Doc LexicalFile `json:"doc"`
}

// AnalyzerInfo names an analyzer and its version.
type AnalyzerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// LexicalFile is one lexical index file and its statistics.
type LexicalFile struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Rows, Terms and Tokens are the file's rows, distinct terms and total
	// length in terms.
	Rows   int64 `json:"rows"`
	Terms  int64 `json:"terms"`
	Tokens int64 `json:"tokens"`
}

// Clone returns a copy of m that shares no slice, map or section with it.
func (m *Manifest) Clone() Manifest {
	c := *m
	c.Windows = slices.Clone(m.Windows)
	c.Inputs = slices.Clone(m.Inputs)
	c.Channels = maps.Clone(m.Channels)
	if m.Lexical != nil {
		l := *m.Lexical
		l.Windows = slices.Clone(l.Windows)
		c.Lexical = &l
	}
	if m.Late != nil {
		l := *m.Late
		c.Late = &l
	}
	if m.Build != nil {
		b := *m.Build
		c.Build = &b
	}
	return c
}
