package tune

import (
	"context"
	"errors"
	"fmt"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// Set is a split's queries, searched once in Index.
type Set struct {
	Index *msrag.Index
	IDs   []string
	Hits  *msrag.ChunkHits // every window's lists, all queries in one
	Qrels eval.Qrels
}

// Load searches the judged queries of a dataset's split in ix.
func Load(ctx context.Context, ix *msrag.Index, dataset, split string, batch, windowK int) (*Set, error) {
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
	return Search(ctx, ix, queries, eval.Qrels(j), batch, windowK)
}

// ErrNothingToLearn reports training queries none of whose relevant
// documents the index holds: every score would be 0, and a rule learned
// from them would be learned from nothing.
var ErrNothingToLearn = errors.New("tune: nothing to learn from")

// CheckJudged fails unless at least one query of qrels (of what) has a
// relevant document (score > 0) that ix holds.
func CheckJudged(ix *msrag.Index, qrels eval.Qrels, what string) error {
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
// chunk lists of every window (windowK chunks each) into one Set.
func Search(ctx context.Context, ix *msrag.Index, queries []corpus.Query, qrels eval.Qrels, batch, windowK int) (*Set, error) {
	set := &Set{Index: ix, Qrels: qrels}
	texts := make([]string, len(queries))
	for i, q := range queries {
		texts[i], set.IDs = q.Text, append(set.IDs, q.ID)
	}
	var parts []*msrag.ChunkHits
	_, err := ix.SearchBatches(ctx, texts, msrag.BatchOptions{Batch: batch, WindowK: windowK}, func(_ int, ch *msrag.ChunkHits) error {
		parts = append(parts, ch)
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
func NewSet(ix *msrag.Index, ids []string, batches []*msrag.ChunkHits, qrels eval.Qrels) (*Set, error) {
	s := &Set{Index: ix, IDs: ids, Qrels: qrels}
	return s, s.join(batches)
}

// join puts the chunk lists of consecutive batches into s.
func (s *Set) join(parts []*msrag.ChunkHits) error {
	ch, err := msrag.Concat(parts)
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

// Run fuses the set with f into a run of k documents per query.
func (s *Set) Run(f msrag.Fusion, k int) (eval.Run, error) {
	// A run ranks documents: the terms each chunk holds are not needed.
	hits, err := s.Index.Fuse(s.Hits, msrag.SearchOptions{K: k, WindowK: s.Hits.Hits[0].K, Fusion: f, SkipTerms: true})
	if err != nil {
		return nil, err
	}
	return msrag.EvalRun(s.IDs, hits), nil
}

// Metric is what fitting maximises: mean nDCG@10.
const Metric = "ndcg_cut_10"

// Score returns each query's nDCG@10 under f, in the order of s.IDs, and
// their mean.
func (s *Set) Score(f msrag.Fusion) ([]float64, float64, error) {
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
