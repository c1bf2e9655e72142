// Package embedders registers every built-in embedder kind in package embed's
// registry, for a program that wants them all:
//
//	import _ "github.com/msrag/msrag/embedders"
//
// The kinds are the in-process ONNX model (package onnx, the default kind:
// built-in and fetched model names, model directories), models behind an
// embedding server (package remote: "openai:URL[#MODEL]", "tei:URL") and the
// non-semantic hash test embedder ("hash-test-embedder", package
// internal/hashembed, over the tokenizer of HashTokenizerModel). A program
// may import only the kinds it wants instead, as database/sql drivers are
// imported; the hash embedder is registered here only.
package embedders

import (
	"fmt"
	"path/filepath"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/onnx"
	_ "github.com/msrag/msrag/remote" // registers "openai" and "tei"
)

// HashTokenizerModel is the model whose tokenizer the hash test embedder
// tokenizes with when it is opened by name.
const HashTokenizerModel = "all-minilm-l6-v2"

func init() {
	embed.Register(hashembed.Kind(hashTokenizer))
}

// hashTokenizer returns the tokenizer file of HashTokenizerModel in the
// model cache.
func hashTokenizer() (string, error) {
	dir, err := onnx.ResolveModel(HashTokenizerModel)
	if err != nil {
		return "", fmt.Errorf("it uses the tokenizer of %s: %w", HashTokenizerModel, err)
	}
	return filepath.Join(dir, onnx.TokenizerFile), nil
}

// OpenHash opens the hash test embedder as its name does (64 dims, 512
// tokens, the tokenizer of HashTokenizerModel), typed, for tests and
// measurements.
func OpenHash() (*hashembed.Hash, error) {
	path, err := hashTokenizer()
	if err != nil {
		return nil, fmt.Errorf("hashembed: %s: %w", hashembed.Name, err)
	}
	return hashembed.NewHash(path, 0, 0)
}
