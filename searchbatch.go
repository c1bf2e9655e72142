package msrag

import (
	"context"
	"fmt"
	"time"

	"github.com/msrag/msrag/eval"
)

// BatchOptions says how SearchBatches searches.
type BatchOptions struct {
	// Batch is the number of queries embedded and searched at once;
	// default 1024.
	Batch int
	// WindowK is the number of chunks each window returns; default 100.
	WindowK int
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
// (queries x channels x window k slots, about 40 bytes each, 20 MiB): a
// larger batch is searched in parts of at most this many slots, or of
// minBatch queries when those hold more, so that memory follows the work
// and not the batch asked for.
const (
	maxBatchHits = 1 << 19
	minBatch     = 1024
)

// SearchBatches embeds and searches queries o.Batch at a time (every
// channel the index can search; an index without a model embeds
// nothing, and o.Queries is not used) and hands each batch's chunk lists to
// fn with the position of its first query. A batch larger than 1024
// queries whose lists would pass maxBatchHits slots is handed over in parts.
// An error, fn's too, names the
// batch's queries (from 1).
func (ix *Index) SearchBatches(ctx context.Context, queries []string, o BatchOptions, fn func(lo int, ch *ChunkHits) error) (BatchTimes, error) {
	var tm BatchTimes
	if o.Batch <= 0 {
		o.Batch = 1024
	}
	if o.WindowK <= 0 {
		o.WindowK = 100
	}
	o.WindowK = ix.Clamp(SearchOptions{WindowK: o.WindowK}).WindowK
	batch := min(o.Batch, max(minBatch, maxBatchHits/max(1, len(ix.layout)*o.WindowK)))
	need := ix.layout.Needs(allOf(ix.layout))
	for lo := 0; lo < len(queries); lo += batch {
		texts := queries[lo:min(lo+batch, len(queries))]
		err := func() error {
			t0 := time.Now()
			q, err := ix.Queries(ctx, texts, o.Queries, need)
			if err != nil {
				return err
			}
			t1 := time.Now()
			ch, err := ix.SearchQueries(ctx, q, o.WindowK, nil)
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
