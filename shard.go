package msrag

import (
	"context"
	"fmt"
	"slices"

	"github.com/msrag/msrag/channel"
)

// ShardSearcher is one shard of an index opened alone for the kinds of
// channel a phase of a scatter-gather search reads (package scatter), with
// no model: the queries come embedded. It gives the shard's statistics
// for a batch of queries, its canonical top rows of every channel searched
// with the statistics of every shard added, and what explains each row;
// package scatter merges the shards' lists as Index.Search does.
type ShardSearcher struct {
	ix    *Index
	kinds []channel.Kind // the kinds opened, in layout order
}

// OpenShard opens shard i of s alone, for the kinds opts.Kinds (nil: every
// kind of the index), each of which must be searchable; opts's model is
// not used.
func OpenShard(opts OpenOptions, s *Shards, i int) (*ShardSearcher, error) {
	if s == nil || i < 0 || i >= len(s.Dirs) {
		return nil, fmt.Errorf("msrag: no shard %d to open", i)
	}
	opts.Embedder, opts.CloseEmbedder, opts.NoEmbedder = nil, false, true
	ix, err := OpenShards(opts, s.Shard(i))
	if err != nil {
		return nil, err
	}
	kinds, err := ix.searchable(opts.Kinds)
	if err != nil {
		ix.Close()
		return nil, err
	}
	return &ShardSearcher{ix: ix, kinds: kinds}, nil
}

// Layout returns the index's channels, those of kinds not opened included.
func (s *ShardSearcher) Layout() Layout { return s.ix.Layout() }

// DocID returns the id of the shard's document i, as its lists number it.
func (s *ShardSearcher) DocID(i int) string { return s.ix.DocID(i) }

// Close frees what the shard holds.
func (s *ShardSearcher) Close() error { return s.ix.Close() }

// Stats returns the shard's statistics of the kinds opened for the
// queries: what every shard's phase adds up before any is searched.
func (s *ShardSearcher) Stats(q *channel.Queries) (channel.StatsSet, error) {
	return s.ix.stats(q, s.kinds)
}

// Search searches the shard with the statistics st (added over every
// shard: Stats of each) for the k best rows of every channel of the kinds
// opened, and returns the lists of every channel of the layout (empty for
// the kinds not opened); k is not clamped to the shard, whose lists are
// merged with the other shards'.
func (s *ShardSearcher) Search(ctx context.Context, q *channel.Queries, st channel.StatsSet, k int) ([]channel.Hits, error) {
	return s.ix.searchShard(ctx, s.ix.shards[0], q, st, k, s.kinds)
}

// Explain returns what explains each row of query qi's list of channel ci
// in h, as Search returned it (nil when its kind explains nothing:
// channel.Explainer): the query terms the row holds. An error of the
// kind's Explain is returned: a list without its rows' terms would lose
// the evidence in silence.
func (s *ShardSearcher) Explain(q *channel.Queries, qi, ci int, h channel.Hits) ([][]string, error) {
	ix := s.ix
	kind := slices.Index(ix.kinds, ix.layout[ci].Kind)
	e, ok := ix.shards[0].parts[kind].(channel.Explainer)
	if !ok {
		return nil, nil
	}
	var rows []int32
	for j := range h.K {
		if x := h.At(qi, j); x.Row >= 0 {
			rows = append(rows, x.Row)
		}
	}
	held, err := e.Explain(q, qi, ci-ix.first[kind], rows)
	if err != nil {
		return nil, err
	}
	if len(held) != len(rows) {
		return nil, fmt.Errorf("%d rows explained of %d", len(held), len(rows))
	}
	for i := range held {
		if held[i] == nil {
			held[i] = []string{}
		}
	}
	return held, nil
}
