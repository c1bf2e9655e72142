package msrag

import (
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
