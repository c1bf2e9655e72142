package msrag

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/internal/store"
)

// Index is a multi-scale index: its channels (package channel: for each
// window, one per kind of channel, and the table of the chunks behind
// them), over one or more shards. Search is safe
// for concurrent use; Close must not run concurrently with it.
type Index struct {
	dir    string // first shard's directory; empty for an index kept in memory
	man    *Manifest
	emb    Embedder
	ownEmb bool // Close closes emb (Open made it)
	// kinds are the index's kinds of channel in layout order, layout its
	// channels, and first[i] the position of kinds[i]'s first channel.
	kinds  []channel.Kind
	layout Layout
	first  []int
	shards []*shard

	// ids holds every document id over all shards, sorted: a document's index
	// in search results is its position here, so rankings (ties included) do
	// not depend on how the corpus was split into shards.
	ids []string
}

// shard is one index directory: its documents, the chunk table of every
// window, and every kind's part of it. Document i of the shard is document
// gidx[i] of the Index.
type shard struct {
	dir    string
	man    *Manifest
	ids    []string
	titles []string
	gidx   []int32
	specs  []chunk.Window      // the windows, in manifest order
	tables []*store.ChunkTable // per window
	parts  []channel.Shard     // per kind, in Index.kinds's order
	// docEnd is each document's byte end (docEnds), made on first use.
	docEnd     []int64
	docEndOnce sync.Once
}

// setKinds sets the index's kinds and its layout over its windows.
func (ix *Index) setKinds(kinds []channel.Kind) {
	ix.kinds = kinds
	ix.layout, ix.first = nil, nil
	ws := windowsOf(ix.man)
	for _, k := range kinds {
		ix.first = append(ix.first, len(ix.layout))
		ix.layout = append(ix.layout, channel.LayoutOf([]channel.Kind{k}, ws)...)
	}
}

// Layout returns the index's channels, in index order: each kind's in turn
// (channel.LayoutOf: a kind's channel of each window in the index's order,
// then its whole-document one).
func (ix *Index) Layout() Layout { return slices.Clone(ix.layout) }

// source is what a kind opens or finishes its part of sh from: the rows of
// every window and of the whole documents, mapped to the index's documents.
func (sh *shard) source(man *Manifest, windows []chunk.Window) *channel.Source {
	src := &channel.Source{Where: sh.where(), Manifest: man, Windows: windows, Docs: docRows{sh}}
	for _, t := range sh.tables {
		src.Rows = append(src.Rows, windowRows{sh, t})
	}
	return src
}

// windowRows maps a window's rows to the index's documents and byte spans.
type windowRows struct {
	sh *shard
	t  *store.ChunkTable
}

func (r windowRows) Len() int                      { return r.t.Len() }
func (r windowRows) Doc(row int32) int32           { return r.sh.gidx[r.t.Doc[row]] }
func (r windowRows) Span(row int32) (int64, int64) { return r.t.ByteStart[row], r.t.ByteEnd[row] }

// docRows maps the rows of a whole-document channel (one per document of
// the shard) to the index's documents; a row spans its document from 0 to
// the end of its last token.
type docRows struct{ sh *shard }

func (r docRows) Len() int            { return len(r.sh.ids) }
func (r docRows) Doc(row int32) int32 { return r.sh.gidx[row] }
func (r docRows) Span(row int32) (int64, int64) {
	return 0, r.sh.docEnds()[row]
}

// docEnds returns the byte end of each document of the shard: the end of
// its last token, the furthest any of its chunks reaches (a sliding
// window's last chunk ends at the document's end).
func (sh *shard) docEnds() []int64 {
	sh.docEndOnce.Do(func() {
		sh.docEnd = make([]int64, len(sh.ids))
		for _, ct := range sh.tables {
			for r, d := range ct.Doc {
				sh.docEnd[d] = max(sh.docEnd[d], ct.ByteEnd[r])
			}
		}
	})
	return sh.docEnd
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

// close frees every kind's part of the shard.
func (sh *shard) close() {
	for _, p := range sh.parts {
		if p != nil {
			p.Close()
		}
	}
	sh.parts = nil
}

// where names the index in messages: its directory, or "in memory".
func (ix *Index) where() string {
	if ix.dir == "" {
		return "in memory"
	}
	return ix.dir
}

// Manifest returns a copy of the index's manifest (the first shard's, for a
// sharded index).
func (ix *Index) Manifest() Manifest {
	return ix.man.Clone()
}

// NumDocs returns the number of documents over all shards.
func (ix *Index) NumDocs() int { return len(ix.ids) }

// DocID returns the id of document i (0 <= i < NumDocs()). Documents are
// numbered in the order of their ids.
func (ix *Index) DocID(i int) string { return ix.ids[i] }

// Dir returns the directory the index was opened from or written to.
func (ix *Index) Dir() string { return ix.dir }

// maxChannelK returns the most rows any channel holds over all shards (a
// window's chunks, or the documents; at least 1): no channel's list can be
// longer.
func (ix *Index) maxChannelK() int {
	mans := make([]*Manifest, len(ix.shards))
	for i, sh := range ix.shards {
		mans[i] = sh.man
	}
	return maxChannelK(mans)
}

// maxChannelK is Index.maxChannelK of the shards whose manifests are mans (which
// the shards' files were checked against when they were opened).
func maxChannelK(mans []*Manifest) int {
	var most, docs int64
	for _, m := range mans {
		docs += m.Docs
	}
	most = max(docs, 1)
	for wi := range mans[0].Windows {
		var n int64
		for _, m := range mans {
			n += m.Windows[wi].Vectors
		}
		most = max(most, n)
	}
	return int(min(most, math.MaxInt32))
}

// Close frees every channel's resources (and the embedder when Open created
// it). It is safe to call twice.
func (ix *Index) Close() error {
	if ix == nil {
		return nil
	}
	for _, s := range ix.shards {
		s.close()
	}
	if ix.ownEmb {
		ix.emb.Close()
		ix.ownEmb = false
	}
	return nil
}

// HasModel reports whether the index was built with a model: false for one
// built with a tokenizer alone (Config.Tokenizer, msrag index --model
// none), whose channels all search by the query texts and which searches
// without embedding its queries.
func (ix *Index) HasModel() bool { return !ix.man.Model.None() }

// usable reports whether the index can search kind i (a kind's part may
// open and yet not be searchable, such as channel.Checker's of files
// another version of the kind made).
func (ix *Index) usable(i int) error {
	for _, sh := range ix.shards {
		if sh.parts[i] == nil {
			return fmt.Errorf("msrag: index %s: its %s channels were not opened (it was opened for other kinds of channel only)", ix.where(), ix.kinds[i].Name())
		}
		if c, ok := sh.parts[i].(channel.Checker); ok {
			if err := c.Check(); err != nil {
				return err
			}
		}
	}
	return nil
}
