package msrag

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/tokenizer"
)

// WindowTokenizer is the tokenizer that cuts the windows of an index
// without dense windows (Config.Tokenizer): a tokenizer.json, the name it
// was asked for by (a model's name or the file's path, recorded in the
// manifest) and the file's sha256 (the index's identity of it).
type WindowTokenizer struct {
	Name      string
	SHA256    string
	Tokenizer *tokenizer.Tokenizer
}

// LoadWindowTokenizer reads the tokenizer.json at path, hashing it; name is
// what the manifest records of it (a model name, or path itself).
func LoadWindowTokenizer(name, path string) (*WindowTokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("msrag: tokenizer %s: %w", name, err)
	}
	tok, err := tokenizer.FromJSON(data)
	if err != nil {
		return nil, fmt.Errorf("msrag: tokenizer %s (%s): %w", name, path, err)
	}
	sum := sha256.Sum256(data)
	return &WindowTokenizer{Name: name, SHA256: hex.EncodeToString(sum[:]), Tokenizer: tok}, nil
}

// NoModel is the model name an index without dense windows records
// (indexfile.NoModel), and what msrag index --model takes for it.
const NoModel = indexfile.NoModel

// ErrNoDense is wrapped by the error for a dense channel (or a query
// embedding) asked of an index without dense windows.
var ErrNoDense = dense.ErrNone

// noModelInfo is the model section of an index without dense windows: no
// model, the tokenizer that cut its windows.
func noModelInfo(t *WindowTokenizer) (ModelInfo, error) {
	access, err := indexfile.MakeParams(map[string]string{"tokenizer": t.Name})
	if err != nil {
		return ModelInfo{}, err
	}
	return ModelInfo{Name: NoModel, TokenizerSHA256: t.SHA256, Origin: indexfile.Origin{Kind: NoModel, Access: access}}, nil
}

// LexicalConfig says how a build makes its lexical windows: the analyzer
// and the BM25 parameters (bm25.Config). A BM25 index is made beside every
// window, over the same chunk rows and byte spans, and one over the
// documents' whole texts.
type LexicalConfig = bm25.Config

// DefaultLexical is the English analyzer with k1 = 0.9 and b = 0.4
// (lexical.DefaultBM25).
func DefaultLexical() *LexicalConfig {
	c := bm25.DefaultConfig()
	return &c
}

// ErrNoLexical is wrapped by the error for a lexical channel asked of an
// index built without lexical windows.
var ErrNoLexical = bm25.ErrNone
