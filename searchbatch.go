package msrag

import (
	"context"
	"fmt"
	"time"

	"github.com/msrag/msrag/embed"
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

// SearchBatches embeds and searches queries o.Batch at a time (the lexical
// channels too, when the index has usable ones: SearchLexical; an index
// without dense windows embeds nothing, and o.Queries is not used) and hands each
// batch's chunk lists to fn with the position of its first query. An error,
// fn's too, names the batch's queries (from 1).
func (ix *Index) SearchBatches(ctx context.Context, queries []string, o BatchOptions, fn func(lo int, ch *ChunkHits) error) (BatchTimes, error) {
	var tm BatchTimes
	if o.Batch <= 0 {
		o.Batch = 1024
	}
	if o.WindowK <= 0 {
		o.WindowK = 100
	}
	for lo := 0; lo < len(queries); lo += o.Batch {
		batch := queries[lo:min(lo+o.Batch, len(queries))]
		err := func() error {
			if !ix.Dense() { // the query texts alone: nothing to embed
				t0 := time.Now()
				ch, err := ix.searchTexts(ctx, batch, o.WindowK)
				if err != nil {
					return err
				}
				tm.Search += time.Since(t0)
				return fn(lo, ch)
			}
			t0 := time.Now()
			vecs, err := ix.embedQueries(ctx, batch, o.Queries)
			if err != nil {
				return err
			}
			t1 := time.Now()
			ch, err := ix.SearchVectors(ctx, vecs, o.WindowK)
			if err != nil {
				return err
			}
			if ix.lexicalUsable() {
				if err := ix.SearchLexical(ctx, batch, ch, o.WindowK); err != nil {
					return err
				}
			}
			tm.Embed, tm.Search = tm.Embed+t1.Sub(t0), tm.Search+time.Since(t1)
			return fn(lo, ch)
		}()
		if err != nil {
			return tm, fmt.Errorf("msrag: queries %d to %d: %w", lo+1, lo+len(batch), err)
		}
	}
	return tm, nil
}

// embedQueries embeds queries with e, or the index's model when e is nil.
func (ix *Index) embedQueries(ctx context.Context, queries []string, e Embedder) ([]float32, error) {
	if e == nil {
		return ix.EmbedQueries(ctx, queries)
	}
	if err := checkQueries(queries); err != nil {
		return nil, err
	}
	return e.Embed(ctx, queries, embed.Query)
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
