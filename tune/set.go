package tune

import (
	"context"
	"errors"
	"fmt"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/fusion"
)

// Set is a split's queries, searched once in Index (an index, or the
// gather of a scatter-gather search).
type Set struct {
	Index msrag.Searcher
	IDs   []string
	Hits  *fusion.Lists // every channel's lists, all queries in one
	Qrels eval.Qrels
}

// Load searches the judged queries of a dataset's split in ix.
func Load(ctx context.Context, ix msrag.Searcher, dataset, split string, batch, channelK int) (*Set, error) {
	ds, err := corpus.OpenDataset(dataset)
	if err != nil {
		return nil, err
	}
	j, queries, err := ds.JudgedQueries(split)
	if err != nil {
		return nil, err
	}
	if err := CheckJudged(ix, eval.Qrels(j), fmt.Sprintf("%s split %s", ds.Dir, split)); err != nil {
		return nil, err
	}
	return Search(ctx, ix, queries, eval.Qrels(j), batch, channelK)
}

// ErrNothingToLearn reports training queries none of whose relevant
// documents the index holds: every score would be 0, and a rule learned
// from them would be learned from nothing.
var ErrNothingToLearn = errors.New("tune: nothing to learn from")

// CheckJudged fails unless at least one query of qrels (of what) has a
// relevant document (score > 0) that ix holds.
func CheckJudged(ix msrag.Searcher, qrels eval.Qrels, what string) error {
	have := make(map[string]bool, ix.NumDocs())
	for i := range ix.NumDocs() {
		have[ix.DocID(i)] = true
	}
	j := eval.Judged(qrels, func(d string) bool { return have[d] })
	switch {
	case j.Relevant == 0:
		return fmt.Errorf("tune: %s judges no document relevant (no score above 0) in %d queries: %w", what, len(qrels), ErrNothingToLearn)
	case j.Queries == 0:
		return fmt.Errorf("tune: none of the %d documents %s judges relevant (such as %q) is in index %s (%d documents): the qrels and the index are of different corpora: %w",
			j.Relevant, what, j.Missing, ix.Dir(), ix.NumDocs(), ErrNothingToLearn)
	}
	return nil
}

// Search embeds and searches queries in batches of batch and gathers the
// chunk lists of every window (channelK chunks each) into one Set.
func Search(ctx context.Context, ix msrag.Searcher, queries []corpus.Query, qrels eval.Qrels, batch, channelK int) (*Set, error) {
	set := &Set{Index: ix, Qrels: qrels}
	texts := make([]string, len(queries))
	for i, q := range queries {
		texts[i], set.IDs = q.Text, append(set.IDs, q.ID)
	}
	var parts []*fusion.Lists
	_, err := ix.SearchBatches(ctx, texts, msrag.BatchOptions{Batch: batch, ChannelK: channelK}, func(_ int, ch *msrag.ChunkHits) error {
		parts = append(parts, &ch.Lists)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("tune: no queries to search")
	}
	return set, set.join(parts)
}

// NewSet makes a Set of queries ids searched in ix in consecutive batches.
func NewSet(ix msrag.Searcher, ids []string, batches []*fusion.Lists, qrels eval.Qrels) (*Set, error) {
	s := &Set{Index: ix, IDs: ids, Qrels: qrels}
	return s, s.join(batches)
}

// join puts the chunk lists of consecutive batches into s.
func (s *Set) join(parts []*fusion.Lists) error {
	ch, err := fusion.Concat(parts)
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	s.Hits = ch
	return nil
}

// Subset returns the set of the queries at positions idx.
func (s *Set) Subset(idx []int) *Set {
	out := &Set{Index: s.Index, Qrels: s.Qrels, Hits: s.Hits.Subset(idx)}
	for _, q := range idx {
		out.IDs = append(out.IDs, s.IDs[q])
	}
	return out
}

// Run fuses the set with f into a run of k documents per query (at most
// the index's).
func (s *Set) Run(f fusion.Fusion, k int) (eval.Run, error) {
	n := s.Index.NumDocs()
	_, rk, err := fusion.Fuse(f, s.Hits, n, min(k, max(n, 1)))
	if err != nil {
		return nil, err
	}
	run := make(eval.Run, len(s.IDs))
	for q, id := range s.IDs {
		docs, scores := rk.Query(q)
		row := make([]eval.Hit, len(docs))
		for j, d := range docs {
			row[j] = eval.Hit{Doc: s.Index.DocID(int(d)), Score: scores[j]}
		}
		run[id] = row
	}
	return run, nil
}

// Metric is what fitting maximises: mean nDCG@10.
const Metric = "ndcg_cut_10"

// Score returns each query's nDCG@10 under f, in the order of s.IDs, and
// their mean.
func (s *Set) Score(f fusion.Fusion) ([]float64, float64, error) {
	run, err := s.Run(f, 100)
	if err != nil {
		return nil, 0, err
	}
	r, err := eval.Evaluate(s.Qrels, run, Metric)
	if err != nil {
		return nil, 0, err
	}
	per := make([]float64, len(s.IDs))
	for i, id := range s.IDs {
		per[i] = r.PerQuery[id][Metric]
	}
	return per, r.Mean[Metric], nil
}
