package msrag

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// FormatVersion is the on-disk format version this code writes and reads.
const FormatVersion = 1

const manifestName = "manifest.json"

// ErrIndexMismatch is wrapped by errors from Open when an index does not match
// its files or the embedder it is opened with.
var ErrIndexMismatch = errors.New("index does not match")

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
}

// WindowInfo describes one window size's files.
type WindowInfo struct {
	// Size is the window size in content tokens. For the full-document
	// window it is the most content tokens the model takes.
	Size int `json:"size"`
	// Full marks the full-document window: each document's first Size
	// tokens, as MTEB embeds documents (truncated to the model's maximum).
	Full        bool   `json:"full,omitempty"`
	Stride      int    `json:"stride"`
	Vectors     int64  `json:"vectors"`
	IndexFile   string `json:"index_file"`
	IndexSHA256 string `json:"index_sha256"`
	ChunksFile  string `json:"chunks_file"`
	ChunkSHA256 string `json:"chunks_sha256"`
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
	Created       time.Time    `json:"created"`
	BuildSeconds  float64      `json:"build_seconds"`
}

func writeManifest(dir string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("msrag: encoding manifest: %w", err)
	}
	return writeFileAtomic(filepath.Join(dir, manifestName), append(data, '\n'))
}

func readManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, manifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("msrag: %s is not an index: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("msrag: %s: %w", path, err)
	}
	if m.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("msrag: %s: format version %d, this msrag reads %d: %w", path, m.FormatVersion, FormatVersion, ErrIndexMismatch)
	}
	if len(m.Windows) == 0 {
		return nil, fmt.Errorf("msrag: %s: no windows: %w", path, ErrIndexMismatch)
	}
	return &m, nil
}

// checkFile verifies that dir/name exists and has the recorded sha256.
func checkFile(dir, name, want string) error {
	got, err := fileSHA256(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("msrag: index %s: %w", dir, err)
	}
	if got != want {
		return fmt.Errorf("msrag: index %s: %s has sha256 %s, the manifest says %s (file changed or corrupted): %w", dir, name, got, want, ErrIndexMismatch)
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
