package msrag

import (
	"context"
	"fmt"
	"strings"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/embed"
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
	q, err := ix.Queries(ctx, queries, nil, ix.fusionNeeds(opts.Fusion))
	if err != nil {
		return nil, err
	}
	ch, err := ix.SearchQueries(ctx, q, opts.WindowK, ix.fusionKinds(opts.Fusion))
	if err != nil {
		return nil, err
	}
	return ix.Fuse(ch, opts)
}

// SearchChunks embeds the queries (when the index has a model) and returns
// the windowK best rows of every channel it can search.
func (ix *Index) SearchChunks(ctx context.Context, queries []string, windowK int) (*ChunkHits, error) {
	q, err := ix.Queries(ctx, queries, nil, ix.layout.Needs(allOf(ix.layout)))
	if err != nil {
		return nil, err
	}
	return ix.SearchQueries(ctx, q, windowK, nil)
}

// SearchVectors searches the channels that need nothing but the queries'
// vectors with already embedded queries, NQ rows of
// the model's dims; the other channels are left unsearched.
func (ix *Index) SearchVectors(ctx context.Context, vecs []float32, windowK int) (*ChunkHits, error) {
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
	return ix.SearchQueries(ctx, &channel.Queries{Vectors: vecs, Dims: dims}, windowK, kinds)
}

// EmbedQueries embeds a batch of queries with the index's model (query role).
func (ix *Index) EmbedQueries(ctx context.Context, queries []string) ([]float32, error) {
	return ix.embedQueries(ctx, queries, nil)
}

// embedQueries embeds queries with e, or the index's model when e is nil.
func (ix *Index) embedQueries(ctx context.Context, queries []string, e Embedder) ([]float32, error) {
	if err := checkQueries(queries); err != nil {
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

// checkQueries refuses an empty query.
func checkQueries(queries []string) error {
	for i, q := range queries {
		if strings.TrimSpace(q) == "" {
			return fmt.Errorf("msrag: query %d is empty", i)
		}
	}
	return nil
}

// Queries makes the batch of queries the kinds search: the texts and, when
// need asks for them and the index has a model, their vectors by e (nil:
// the index's model).
func (ix *Index) Queries(ctx context.Context, texts []string, e Embedder, need channel.Needs) (*channel.Queries, error) {
	if err := checkQueries(texts); err != nil {
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

// Stats returns the statistics every kind of the index needs for the
// queries, added over its shards: the first phase of a search, and what a
// scatter-gather search gathers from every shard before it searches any.
func (ix *Index) Stats(q *channel.Queries, kinds []channel.Kind) (channel.StatsSet, error) {
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
		if !containsKind(wanted, k) {
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

// SearchQueries searches the kinds of channel given (nil: every kind the
// index can search) for each query's windowK best rows per channel: the
// statistics of every shard are added (Stats), each shard is searched with
// them, and the shards' lists of each channel are merged exactly
// (channel.Merge), so a sharded index ranks as one. windowK is clamped as
// Clamp clamps SearchOptions.WindowK.
func (ix *Index) SearchQueries(ctx context.Context, q *channel.Queries, windowK int, kinds []channel.Kind) (*ChunkHits, error) {
	if ix.docsOnly {
		return nil, fmt.Errorf("msrag: index %s was opened with its documents only: it fuses lists searched elsewhere, it does not search", ix.where())
	}
	windowK = ix.Clamp(SearchOptions{WindowK: windowK}).WindowK
	kinds, err := ix.searchable(kinds)
	if err != nil {
		return nil, err
	}
	ch := newChunkHits(ix.Layout(), q.Len())
	ch.Queries, ch.Dims, ch.q = q.Vectors, q.Dims, q
	if q.Len() == 0 {
		return ch, nil
	}
	st, err := ix.Stats(q, kinds)
	if err != nil {
		return nil, err
	}
	lists := make([][]channel.Hits, len(ix.shards))
	for s, sh := range ix.shards {
		if lists[s], err = ix.searchShard(ctx, sh, q, st, windowK, kinds); err != nil {
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
		h, err := channel.Merge(per, windowK)
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
		case kinds != nil && containsKind(kinds, k):
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
		if !containsKind(wanted, kind) {
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
