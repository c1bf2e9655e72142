package msrag

import (
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/lexical"
)

// window is one window of a shard as the tests read it: its chunk table and
// the engines of its channels (nil for a kind the index lacks).
type window struct {
	spec   chunk.Window
	chunks *store.ChunkTable
	index  *faiss.Index
	lex    *lexical.Index
}

// windows returns the shard's windows, in manifest order.
func (sh *shard) windows() []*window {
	var out []*window
	for wi, t := range sh.tables {
		w := &window{spec: sh.specs[wi], chunks: t}
		for _, p := range sh.parts {
			if ix := dense.IndexOf(p, wi); ix != nil {
				w.index = ix
			}
			if ix := bm25.IndexOf(p, wi); ix != nil {
				w.lex = ix
			}
		}
		out = append(out, w)
	}
	return out
}

// docLex returns the shard's whole-document BM25 index, nil without one.
func (sh *shard) docLex() *lexical.Index {
	for _, p := range sh.parts {
		if ix := bm25.IndexOf(p, len(sh.tables)); ix != nil {
			return ix
		}
	}
	return nil
}

// The built-in kinds, as the tests name them: the core imports no kind.
var (
	Dense   = dense.Kind
	Lexical = bm25.Kind
)

// ErrNoLexical is wrapped by the error for a lexical channel asked of an
// index without one.
var ErrNoLexical = bm25.ErrNone

// LexicalConfig is the parameters of lexical channels.
type LexicalConfig = bm25.Config

// DefaultLexical is bm25.DefaultConfig.
func DefaultLexical() *LexicalConfig {
	c := bm25.DefaultConfig()
	return &c
}

// DenseChannel is the dense channel of window w.
func DenseChannel(w chunk.Window) Channel { return Channel{Kind: Dense, Window: w} }

// LexicalChannel is the lexical channel of window w; the zero window is the
// whole-document channel.
func LexicalChannel(w chunk.Window) Channel { return Channel{Kind: Lexical, Window: w} }

// DocLexicalChannel is the lexical channel over the documents' whole texts.
func DocLexicalChannel() Channel { return Channel{Kind: Lexical} }

// withLexical is the channels of a build with a model: dense, lexical with
// lex (none when nil), then more.
func withLexical(lex *LexicalConfig, more ...channel.Params) []channel.Params {
	out := []channel.Params{dense.Params{}}
	if lex != nil {
		out = append(out, *lex)
	}
	return append(out, more...)
}
