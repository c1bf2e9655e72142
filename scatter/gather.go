package scatter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/scatterfile"
)

// Gather is the gather phase of a scatter-gather search: every shard's
// lists, checked, then merged channel by channel (channel.Merge) a block of
// queries at a time. It is a msrag.Searcher, as the index of the shards
// searched in one process is: it fuses the merged lists as that index
// does, by the shards' documents (opened alone, no channel), and says
// what that index is.
type Gather struct {
	ix     *msrag.Index
	layout msrag.Layout // the index's channels
	set    *shardSet
	o      Options
	qs     QuerySet
	kinds  []channel.Kind
	k      int
	vecs   *queryVectors
}

var _ msrag.Searcher = (*Gather)(nil)

// OpenGather checks the lists every scatter task wrote into o.Work for the
// queries qs over the shards dirs (each of this search, of its shard, with
// the same statistics, whole) and opens the shards' documents.
func OpenGather(dirs []string, qs QuerySet, o Options) (_ *Gather, err error) {
	o = o.withDefaults()
	set, kinds, fp, err := startPhase(dirs, 0, qs, o)
	if err != nil {
		return nil, err
	}
	stats := ""
	for j := range dirs {
		rec, err := scatterfile.ReadRecord(o.Work, scatterfile.PhaseLists, j, len(dirs))
		if err != nil {
			return nil, fmt.Errorf("msrag: %w", err)
		}
		path := scatterfile.Path(o.Work, scatterfile.PhaseLists, j, ".json")
		if err := ofSearch(rec, path, fp, set, j); err != nil {
			return nil, err
		}
		if j > 0 && rec.Stats != stats {
			return nil, fmt.Errorf("msrag: %s was searched with other statistics than shard 0's (a statistics file changed between scatter tasks): %w", path, scatterfile.ErrBad)
		}
		stats = rec.Stats
		if _, err := scatterfile.CheckData(o.Work, scatterfile.PhaseLists, j, rec); err != nil {
			return nil, fmt.Errorf("msrag: %w", err)
		}
	}
	if err := removeTemps(o.Work, len(dirs)); err != nil {
		return nil, err
	}
	g := &Gather{set: set, o: o, qs: qs, kinds: kinds, k: min(o.ChannelK, set.MaxChannelK())}
	if queryNeeds(kinds).Has(channel.QueryVectors) && !set.Manifests[0].Model.None() {
		g.vecs = newQueryVectors(set, o.Work, fp)
		if err := g.vecs.check(len(qs.IDs)); err != nil {
			return nil, err
		}
	}
	open := o.Open
	open.Kinds, open.Embedder, open.CloseEmbedder, open.GPUs = []msrag.ChannelKind{}, nil, false, nil // the documents alone
	if g.ix, err = msrag.OpenShards(open, set.Shards); err != nil {
		return nil, err
	}
	g.layout = g.ix.Layout()
	return g, nil
}

// Fuse turns a block's merged lists into documents, as the index of the
// shards does (msrag.Index.Fuse).
func (g *Gather) Fuse(ch *msrag.ChunkHits, opts msrag.SearchOptions) ([][]msrag.Hit, error) {
	return g.ix.Fuse(ch, opts)
}

// Clamp fills in opts's defaults, K at most the shards' documents and
// ChannelK at most the rows any channel of them holds (msrag.Index.Clamp).
func (g *Gather) Clamp(opts msrag.SearchOptions) msrag.SearchOptions { return g.ix.Clamp(opts) }

// Layout returns the index's channels.
func (g *Gather) Layout() msrag.Layout { return g.ix.Layout() }

// Manifest returns the first shard's manifest.
func (g *Gather) Manifest() msrag.Manifest { return g.ix.Manifest() }

// Dir returns the first shard's directory.
func (g *Gather) Dir() string { return g.ix.Dir() }

// NumDocs returns the number of documents over every shard.
func (g *Gather) NumDocs() int { return g.ix.NumDocs() }

// DocID returns the id of document i, numbered over every shard in the
// order of their ids.
func (g *Gather) DocID(i int) string { return g.ix.DocID(i) }

// CheckFusion fails unless f can be fused from the gathered lists: the
// index's check (fusion.CheckServes) with the kinds the scatter searched.
func (g *Gather) CheckFusion(f fusion.Fusion) error {
	return fusion.CheckServes(f, g.layout, g.ix.Manifest().Model.Dims, g.ix.Dir(), func(k msrag.ChannelKind) error {
		if !slices.Contains(g.kinds, k) {
			return fmt.Errorf("msrag: fusion %s: the scatter of %s did not search the %s channels", f, g.o.Work, k.Name())
		}
		return nil
	})
}

// Close closes the index and what is open of the work directory.
func (g *Gather) Close() error {
	if g.vecs != nil {
		g.vecs.close()
	}
	return g.ix.Close()
}

// SearchBatches hands the merged lists of every block of the search's
// queries to fn with the position of its first query, as
// Index.SearchBatches does after a search of every shard in one process.
// queries must be the search's texts and o.ChannelK its channel k (0: its
// own); the blocks are the scatter's.
func (g *Gather) SearchBatches(ctx context.Context, queries []string, o msrag.BatchOptions, fn func(lo int, ch *msrag.ChunkHits) error) (msrag.BatchTimes, error) {
	var tm msrag.BatchTimes
	if !slices.Equal(queries, g.qs.Texts) {
		return tm, fmt.Errorf("msrag: the gather of %s was given other queries than it searched", g.o.Work)
	}
	if o.ChannelK > 0 && o.ChannelK != g.o.ChannelK {
		return tm, fmt.Errorf("msrag: window k %d asked of a search of window k %d", o.ChannelK, g.o.ChannelK)
	}
	readers := make([]*scatterfile.Reader, len(g.set.Dirs))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.Close()
			}
		}
	}()
	for j := range readers {
		r, err := scatterfile.OpenLists(scatterfile.Path(g.o.Work, scatterfile.PhaseLists, j, ".arrow"))
		if err != nil {
			return tm, err
		}
		readers[j] = r
	}
	nq := len(queries)
	for lo := 0; lo < nq || lo == 0; lo += g.o.Batch {
		hi := min(lo+g.o.Batch, nq)
		t0 := time.Now()
		ch, err := g.block(readers, lo, hi)
		if err != nil {
			return tm, fmt.Errorf("msrag: queries %d to %d: %w", lo+1, hi, err)
		}
		tm.Search += time.Since(t0)
		if err := ctx.Err(); err != nil {
			return tm, err
		}
		if hi > lo {
			if err := fn(lo, ch); err != nil {
				return tm, fmt.Errorf("msrag: queries %d to %d: %w", lo+1, hi, err)
			}
		}
		if hi >= nq {
			break
		}
	}
	for j, r := range readers {
		if _, err := r.Lists(); !errors.Is(err, io.EOF) {
			return tm, fmt.Errorf("msrag: %s holds more blocks than the queries: %w", scatterfile.Path(g.o.Work, scatterfile.PhaseLists, j, ".arrow"), scatterfile.ErrBad)
		}
	}
	return tm, nil
}

// shardLists is one shard's lists of a block, per channel, and what
// explains their rows.
type shardLists struct {
	hits  []channel.Hits
	terms []map[int64][]string // per channel: query<<32|row -> terms
}

// block reads every shard's lists of the queries [lo, hi) and merges them.
func (g *Gather) block(readers []*scatterfile.Reader, lo, hi int) (*msrag.ChunkHits, error) {
	layout := g.layout
	ch := msrag.NewChunkHits(layout, hi-lo)
	per := make([]shardLists, len(readers))
	for j, r := range readers {
		rows, err := r.Lists()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("msrag: %s ends before these queries: %w", scatterfile.Path(g.o.Work, scatterfile.PhaseLists, j, ".arrow"), scatterfile.ErrBad)
		}
		if err != nil {
			return nil, err
		}
		if per[j], err = g.shardLists(rows, lo, hi); err != nil {
			return nil, fmt.Errorf("%s: %w", scatterfile.Path(g.o.Work, scatterfile.PhaseLists, j, ".arrow"), err)
		}
	}
	for ci, c := range layout {
		if !slices.Contains(g.kinds, c.Kind) {
			continue
		}
		lists := make([]channel.Hits, len(per))
		for j := range per {
			lists[j] = per[j].hits[ci]
		}
		merged, err := channel.Merge(lists, g.k)
		if err != nil {
			return nil, fmt.Errorf("msrag: channel %s: %w", c.Name(), err)
		}
		var terms [][]string
		if g.o.Terms {
			terms = termsOf(merged, per, ci)
		}
		ch.SetGathered(ci, merged, terms)
	}
	if g.vecs != nil {
		v, err := g.vecs.take(g.qs.IDs[lo:hi])
		if err != nil {
			return nil, err
		}
		ch.Queries, ch.Dims = v, g.vecs.width
	}
	return ch, nil
}

// shardLists places one shard's rows of the queries [lo, hi) in lists per
// channel, their documents numbered over every shard.
func (g *Gather) shardLists(rows []scatterfile.Row, lo, hi int) (shardLists, error) {
	nq := hi - lo
	layout := g.layout
	out := shardLists{hits: make([]channel.Hits, len(layout)), terms: make([]map[int64][]string, len(layout))}
	for ci, c := range layout {
		if slices.Contains(g.kinds, c.Kind) {
			out.hits[ci] = channel.NewHits(nq, g.k)
		}
	}
	for _, r := range rows {
		q := int(r.Query) - lo
		switch {
		case q < 0 || q >= nq:
			return out, fmt.Errorf("a row of query %d in the block of queries %d to %d: %w", r.Query, lo, hi-1, scatterfile.ErrBad)
		case r.Channel < 0 || int(r.Channel) >= len(out.hits) || out.hits[r.Channel].K == 0:
			return out, fmt.Errorf("a row of channel %d, which the search has not: %w", r.Channel, scatterfile.ErrBad)
		case r.Rank < 0 || int(r.Rank) >= g.k:
			return out, fmt.Errorf("a row of rank %d of at most %d: %w", r.Rank, g.k, scatterfile.ErrBad)
		}
		doc, ok := g.docIndex(r.Doc)
		if !ok {
			return out, fmt.Errorf("a row of document %q, which no shard holds: %w", r.Doc, scatterfile.ErrBad)
		}
		h := out.hits[r.Channel]
		i := q*h.K + int(r.Rank)
		h.Rows[i], h.Docs[i], h.Scores[i], h.Start[i], h.End[i] = r.Row, int32(doc), r.Score, r.Start, r.End
		if r.Terms != nil {
			if out.terms[r.Channel] == nil {
				out.terms[r.Channel] = map[int64][]string{}
			}
			out.terms[r.Channel][int64(q)<<32|int64(r.Row)] = r.Terms
		}
	}
	return out, nil
}

// docIndex returns the index's number of the document id: its place
// among the ids of every shard, sorted.
func (g *Gather) docIndex(id string) (int, bool) {
	n := g.ix.NumDocs()
	i := sort.Search(n, func(i int) bool { return g.ix.DocID(i) >= id })
	return i, i < n && g.ix.DocID(i) == id
}

// termsOf returns, parallel to merged's slots, what explains each merged
// row, from the shard it came from.
func termsOf(merged channel.Hits, per []shardLists, ci int) [][]string {
	out := make([][]string, len(merged.Rows))
	for i, row := range merged.Rows {
		if row < 0 {
			continue
		}
		if m := per[merged.Shards[i]].terms[ci]; m != nil {
			out[i] = m[int64(i/merged.K)<<32|int64(row)]
		}
	}
	return out
}
