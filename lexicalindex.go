package msrag

import (
	"github.com/msrag/msrag/channel/bm25"
)

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
