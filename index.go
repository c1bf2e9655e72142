package msrag

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/lexical"
)

// Index is a multi-scale index: for each window a FAISS index and the table
// of the chunks behind its vectors, over one or more shards. Search is safe for
// concurrent use; Close must not run concurrently with it.
type Index struct {
	dir    string // first shard's directory; empty for an index kept in memory
	man    *Manifest
	emb    Embedder
	ownEmb bool // Close closes emb (Open made it)
	shards []*shard
	// lex is the lexical windows' analyzer and parameters; nil for an index
	// without lexical windows.
	lex *lexicalState

	// ids holds every document id over all shards, sorted: a document's index
	// in search results is its position here, so rankings (ties included) do
	// not depend on how the corpus was split into shards.
	ids []string
}

// shard is one index directory: its documents and windows. Document i of the
// shard is document gidx[i] of the Index.
type shard struct {
	dir     string
	ids     []string
	titles  []string
	gidx    []int32
	windows []*window
	// docLex is the whole-document lexical index (a row per document of
	// ids), nil without lexical windows.
	docLex *lexical.Index
	// docEnd is each document's byte end (docEnds), made on first use.
	docEnd     []int64
	docEndOnce sync.Once
}

// docEnds returns the byte end of each document of the shard: the end of
// its last token, the furthest any of its chunks reaches (a sliding
// window's last chunk ends at the document's end). The whole-document
// lexical channel's hits span from 0 to it.
func (sh *shard) docEnds() []int64 {
	sh.docEndOnce.Do(func() {
		sh.docEnd = make([]int64, len(sh.ids))
		for _, w := range sh.windows {
			ct := w.chunks
			for r, d := range ct.Doc {
				sh.docEnd[d] = max(sh.docEnd[d], ct.ByteEnd[r])
			}
		}
	})
	return sh.docEnd
}

// window is one window of a shard: its FAISS index and chunk table.
type window struct {
	spec   chunk.Window
	index  *faiss.Index
	chunks *store.ChunkTable
	// lex is the lexical index of the same chunk rows, nil without lexical
	// windows.
	lex *lexical.Index
}

// indexDocs sorts the document ids of all shards and numbers each shard's
// documents by their place in that order. It fails on an id found twice.
func (ix *Index) indexDocs() error {
	type ref struct{ s, i int32 }
	var refs []ref
	for s, sh := range ix.shards {
		for i := range sh.ids {
			refs = append(refs, ref{int32(s), int32(i)})
		}
	}
	id := func(r ref) string { return ix.shards[r.s].ids[r.i] }
	slices.SortFunc(refs, func(a, b ref) int { return strings.Compare(id(a), id(b)) })
	ix.ids = make([]string, len(refs))
	for _, sh := range ix.shards {
		sh.gidx = make([]int32, len(sh.ids))
	}
	for g, r := range refs {
		if g > 0 && id(r) == ix.ids[g-1] {
			prev := refs[g-1]
			return fmt.Errorf("msrag: document id %q is in %s and %s: %w", id(r), ix.shards[prev.s].where(), ix.shards[r.s].where(), ErrIndexMismatch)
		}
		ix.ids[g] = id(r)
		ix.shards[r.s].gidx[r.i] = int32(g)
	}
	return nil
}

func (sh *shard) where() string {
	if sh.dir == "" {
		return "the index"
	}
	return sh.dir
}

func closeWindows(ws []*window) {
	for _, w := range ws {
		if w != nil && w.index != nil {
			w.index.Close()
		}
	}
}

// Manifest returns a copy of the index's manifest (the first shard's, for a
// sharded index).
func (ix *Index) Manifest() Manifest {
	m := *ix.man
	m.Windows = slices.Clone(m.Windows)
	if m.Lexical != nil {
		l := *m.Lexical
		l.Windows = slices.Clone(l.Windows)
		m.Lexical = &l
	}
	return m
}

// Windows returns the index's windows, in index order: sliding windows and,
// if the index has it, the full window (chunk.Full with its size).
func (ix *Index) Windows() []chunk.Window {
	out := make([]chunk.Window, len(ix.man.Windows))
	for i, w := range ix.man.Windows {
		out[i] = windowOf(w)
	}
	return out
}

// windowOf is the chunk.Window a manifest entry describes.
func windowOf(w WindowInfo) chunk.Window {
	if w.Truncate {
		return chunk.Window{Size: w.Size, Truncate: true}
	}
	out := chunk.Window{Size: w.Size, ShortTail: w.Tail != tailAligned}
	if w.Stride != w.Size {
		out.Stride = w.Stride
	}
	return out
}

// Tails a manifest records.
const (
	tailAligned = "aligned"
	tailShort   = "short"
)

// tailOf is what the manifest records of a window's tail ("" for the full
// window).
func tailOf(w chunk.Window) string {
	switch {
	case w.Truncate:
		return ""
	case w.ShortTail:
		return tailShort
	}
	return tailAligned
}

// NumDocs returns the number of documents over all shards.
func (ix *Index) NumDocs() int { return len(ix.ids) }

// DocID returns the id of document i (0 <= i < NumDocs()). Documents are
// numbered in the order of their ids.
func (ix *Index) DocID(i int) string { return ix.ids[i] }

// Embedder returns the embedder the index searches with.
func (ix *Index) Embedder() Embedder { return ix.emb }

// Dir returns the directory the index was opened from or written to.
func (ix *Index) Dir() string { return ix.dir }

// Close frees the FAISS indices (and the embedder when Open created it). It is
// safe to call twice.
func (ix *Index) Close() error {
	if ix == nil {
		return nil
	}
	for _, s := range ix.shards {
		closeWindows(s.windows)
		s.windows = nil
	}
	if ix.ownEmb {
		ix.emb.Close()
		ix.ownEmb = false
	}
	return nil
}
