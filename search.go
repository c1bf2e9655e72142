package msrag

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/router"
)

// Search searches every channel the fusion reads (embedding the queries
// once when one of them needs vectors) and fuses the results. An index
// without a model embeds nothing: it searches its channels with the query
// texts.
func (ix *Index) Search(ctx context.Context, queries []string, opts SearchOptions) ([][]Hit, error) {
	opts = ix.Clamp(opts)
	if err := ix.CheckFusion(opts.Fusion); err != nil {
		return nil, err
	}
	q, err := ix.queries(ctx, queries, nil, ix.fusionNeeds(opts.Fusion))
	if err != nil {
		return nil, err
	}
	ch, err := ix.searchQueries(ctx, q, opts.ChannelK, ix.fusionKinds(opts.Fusion))
	if err != nil {
		return nil, err
	}
	return ix.Fuse(ch, opts)
}

// SearchVectors searches the channels that need nothing but the queries'
// vectors with already embedded queries, NQ rows of
// the model's dims; the other channels are left unsearched.
func (ix *Index) SearchVectors(ctx context.Context, vecs []float32, channelK int) (*ChunkHits, error) {
	if !ix.HasModel() {
		return nil, fmt.Errorf("msrag: index %s has no model, so no channel searched by vector (built with --model none): %w", ix.where(), ErrNoModel)
	}
	dims := ix.man.Model.Dims
	if len(vecs)%dims != 0 {
		return nil, fmt.Errorf("msrag: %d floats is not a whole number of %d-dim vectors", len(vecs), dims)
	}
	var kinds []channel.Kind
	for _, k := range ix.kinds {
		if !k.Needs().Has(channel.QueryTexts) {
			kinds = append(kinds, k)
		}
	}
	return ix.searchQueries(ctx, &channel.Queries{Vectors: vecs, Dims: dims}, channelK, kinds)
}

// embedQueries embeds queries with e, or the index's model when e is nil.
func (ix *Index) embedQueries(ctx context.Context, queries []string, e Embedder) ([]float32, error) {
	if err := CheckQueries(queries); err != nil {
		return nil, err
	}
	if !ix.HasModel() {
		return nil, fmt.Errorf("msrag: index %s has no model to embed queries with (built with --model none): %w", ix.where(), ErrNoModel)
	}
	if e == nil {
		e = ix.emb
	}
	return e.Embed(ctx, queries, embed.Query)
}

// CheckQueries refuses an empty query, naming it.
func CheckQueries(queries []string) error {
	for i, q := range queries {
		if strings.TrimSpace(q) == "" {
			return fmt.Errorf("msrag: query %d is empty", i)
		}
	}
	return nil
}

// queries makes the batch of queries the kinds search: the texts and, when
// need asks for them and the index has a model, their vectors by e (nil:
// the index's model).
func (ix *Index) queries(ctx context.Context, texts []string, e Embedder, need channel.Needs) (*channel.Queries, error) {
	if err := CheckQueries(texts); err != nil {
		return nil, err
	}
	q := &channel.Queries{Texts: texts}
	if need.Has(channel.QueryVectors) && ix.HasModel() && len(texts) > 0 {
		vecs, err := ix.embedQueries(ctx, texts, e)
		if err != nil {
			return nil, err
		}
		q.Vectors, q.Dims = vecs, ix.man.Model.Dims
	}
	return q, nil
}

// stats returns the statistics the kinds given need for the queries,
// added over the index's shards: the first phase of a search, and what a
// scatter-gather search gathers from every shard before it searches any
// (ShardSearcher.Stats).
func (ix *Index) stats(q *channel.Queries, kinds []channel.Kind) (channel.StatsSet, error) {
	out := channel.StatsSet{}
	for _, sh := range ix.shards {
		st, err := sh.stats(q, ix.kinds, kinds)
		if err != nil {
			return nil, err
		}
		if err := out.Add(st); err != nil {
			return nil, fmt.Errorf("msrag: %w", err)
		}
	}
	return out, nil
}

// stats returns one shard's statistics of the kinds wanted (of kinds, the
// index's).
func (sh *shard) stats(q *channel.Queries, kinds, wanted []channel.Kind) (channel.StatsSet, error) {
	out := channel.StatsSet{}
	for i, k := range kinds {
		if !slices.Contains(wanted, k) {
			continue
		}
		st, err := sh.parts[i].Stats(q)
		if err != nil {
			return nil, fmt.Errorf("msrag: %s: %w", sh.where(), err)
		}
		if st != nil {
			out[k.Name()] = st
		}
	}
	return out, nil
}

// searchQueries searches the kinds of channel given (nil: every kind the
// index can search) for each query's channelK best rows per channel: the
// statistics of every shard are added (stats), each shard is searched with
// them, and the shards' lists of each channel are merged exactly
// (channel.Merge), so a sharded index ranks as one. channelK is clamped as
// Clamp clamps SearchOptions.ChannelK.
func (ix *Index) searchQueries(ctx context.Context, q *channel.Queries, channelK int, kinds []channel.Kind) (*ChunkHits, error) {
	channelK = ix.Clamp(SearchOptions{ChannelK: channelK}).ChannelK
	kinds, err := ix.searchable(kinds)
	if err != nil {
		return nil, err
	}
	ch := NewChunkHits(ix.Layout(), q.Len())
	ch.Queries, ch.Dims, ch.q = q.Vectors, q.Dims, q
	if q.Len() == 0 {
		return ch, nil
	}
	st, err := ix.stats(q, kinds)
	if err != nil {
		return nil, err
	}
	lists := make([][]channel.Hits, len(ix.shards))
	for s, sh := range ix.shards {
		if lists[s], err = ix.searchShard(ctx, sh, q, st, channelK, kinds); err != nil {
			return nil, err
		}
	}
	for ci := range ix.layout {
		if lists[0][ci].K == 0 {
			continue // a kind not searched
		}
		per := make([]channel.Hits, len(lists))
		for s := range lists {
			per[s] = lists[s][ci]
		}
		h, err := channel.Merge(per, channelK)
		if err != nil {
			return nil, fmt.Errorf("msrag: channel %s: %w", ix.layout[ci].Name(), err)
		}
		ch.set(ci, h)
	}
	return ch, nil
}

// searchable returns the kinds to search: those given, each usable, or
// every usable kind of the index.
func (ix *Index) searchable(kinds []channel.Kind) ([]channel.Kind, error) {
	var out []channel.Kind
	for i, k := range ix.kinds {
		err := ix.usable(i)
		switch {
		case kinds == nil && err == nil:
			out = append(out, k)
		case kinds != nil && slices.Contains(kinds, k):
			if err != nil {
				return nil, err
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// searchShard searches the kinds wanted of one shard with the statistics
// st, and returns the lists of every channel of the layout (empty for the
// kinds not searched).
func (ix *Index) searchShard(ctx context.Context, sh *shard, q *channel.Queries, st channel.StatsSet, k int, wanted []channel.Kind) ([]channel.Hits, error) {
	out := make([]channel.Hits, len(ix.layout))
	for i, kind := range ix.kinds {
		if !slices.Contains(wanted, kind) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hs, err := sh.parts[i].Search(ctx, q, st[kind.Name()], k)
		if err != nil {
			return nil, err
		}
		copy(out[ix.first[i]:], hs)
	}
	return out, nil
}

// CheckFusion fails unless every channel f fuses or weighs is a channel of
// the index, of a kind it can search, so that a search can be refused
// before any query is embedded (fusion.CheckServes).
func (ix *Index) CheckFusion(f fusion.Fusion) error {
	return fusion.CheckServes(f, ix.layout, ix.man.Model.Dims, ix.where(), func(k ChannelKind) error {
		return ix.usable(slices.Index(ix.kinds, k))
	})
}

// fusionKinds returns the kinds of the channels f fuses.
func (ix *Index) fusionKinds(f fusion.Fusion) []channel.Kind {
	kinds, _ := f.Kinds(ix.layout)
	return kinds
}

// fusionNeeds returns what a search for f reads of the queries: what its
// channels need, and their vectors for a router.
func (ix *Index) fusionNeeds(f fusion.Fusion) channel.Needs {
	sel, _ := f.Select(ix.layout)
	n := ix.layout.Needs(sel)
	if f.Router != nil && f.Router.Set() == router.EmbeddingWindows {
		n |= channel.QueryVectors
	}
	return n
}

// Searcher is what an index's queries are searched in, batch by batch, and
// fused: an open Index, or the gather of a scatter-gather search over its
// shards (package scatter), which stands for the index whose lists it
// gathers. What it says of the index (its layout, manifest, directory and
// documents) is the index's.
type Searcher interface {
	// SearchBatches hands the chunk lists of every batch of queries to fn
	// with the position of its first query (Index.SearchBatches).
	SearchBatches(ctx context.Context, queries []string, o BatchOptions, fn func(lo int, ch *ChunkHits) error) (BatchTimes, error)
	// CheckFusion fails unless the lists handed over hold every channel f
	// fuses (Index.CheckFusion).
	CheckFusion(f fusion.Fusion) error
	// Clamp fills in opts's defaults, K at most the documents and ChannelK
	// at most the rows any channel holds (Index.Clamp).
	Clamp(opts SearchOptions) SearchOptions
	// Fuse turns a batch's lists into documents (Index.Fuse).
	Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error)
	Layout() Layout
	Manifest() Manifest
	Dir() string
	NumDocs() int
	DocID(i int) string
	Close() error
}

var _ Searcher = (*Index)(nil)

// BatchOptions says how SearchBatches searches.
type BatchOptions struct {
	// Batch is the number of queries embedded and searched at once;
	// default 1024.
	Batch int
	// ChannelK is the number of chunks each channel returns (its k, the
	// command line's --window-k); default 100.
	ChannelK int
	// Queries, when set, embeds the queries instead of the index's model:
	// the same model behind a cache of earlier vectors, say
	// (embed.QueryCache). Nil: the index's.
	Queries Embedder
}

// BatchTimes is where SearchBatches spent its time.
type BatchTimes struct {
	Embed, Search time.Duration
}

// maxBatchHits bounds the chunk lists one batch of SearchBatches holds
// (queries x channels x each channel's k slots, about 40 bytes each, 20 MiB): a
// larger batch is searched in parts of at most this many slots, or of
// minBatch queries when those hold more, so that memory follows the work
// and not the batch asked for.
const (
	maxBatchHits = 1 << 19
	minBatch     = 1024
)

// SearchBatches embeds and searches queries o.Batch at a time (every
// channel the index can search, the queries embedded only when one of
// them needs their vectors: an index without a model, or opened for kinds
// that search by text alone, embeds nothing, and o.Queries is not used)
// and hands each batch's chunk lists to
// fn with the position of its first query. A batch larger than 1024
// queries whose lists would pass maxBatchHits slots is handed over in parts.
// An error, fn's too, names the
// batch's queries (from 1).
func (ix *Index) SearchBatches(ctx context.Context, queries []string, o BatchOptions, fn func(lo int, ch *ChunkHits) error) (BatchTimes, error) {
	var tm BatchTimes
	if o.Batch <= 0 {
		o.Batch = 1024
	}
	if o.ChannelK <= 0 {
		o.ChannelK = 100
	}
	o.ChannelK = ix.Clamp(SearchOptions{ChannelK: o.ChannelK}).ChannelK
	batch := min(o.Batch, max(minBatch, maxBatchHits/max(1, len(ix.layout)*o.ChannelK)))
	kinds, err := ix.searchable(nil)
	if err != nil {
		return tm, err
	}
	var need channel.Needs
	for _, k := range kinds {
		need |= k.Needs()
	}
	for lo := 0; lo < len(queries); lo += batch {
		texts := queries[lo:min(lo+batch, len(queries))]
		err := func() error {
			t0 := time.Now()
			q, err := ix.queries(ctx, texts, o.Queries, need)
			if err != nil {
				return err
			}
			t1 := time.Now()
			ch, err := ix.searchQueries(ctx, q, o.ChannelK, kinds)
			if err != nil {
				return err
			}
			tm.Embed, tm.Search = tm.Embed+t1.Sub(t0), tm.Search+time.Since(t1)
			return fn(lo, ch)
		}()
		if err != nil {
			return tm, fmt.Errorf("msrag: queries %d to %d: %w", lo+1, lo+len(texts), err)
		}
	}
	return tm, nil
}

// EvalRun turns each query's hits (hits[i] those of the query ids[i]) into
// a run to score with package eval.
func EvalRun(ids []string, hits [][]Hit) eval.Run {
	run := make(eval.Run, len(ids))
	for q, id := range ids {
		row := make([]eval.Hit, len(hits[q]))
		for j, h := range hits[q] {
			row[j] = eval.Hit{Doc: h.DocID, Score: h.Score}
		}
		run[id] = row
	}
	return run
}
