package msrag

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
)

// countingEmbedder counts the query texts it embeds.
type countingEmbedder struct {
	Embedder
	queries int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string, role embed.Role) ([]float32, error) {
	if role == embed.Query {
		c.queries += len(texts)
	}
	return c.Embedder.Embed(ctx, texts, role)
}

// TestSearchBatches: batches of 3 give the chunk lists one search of all
// gives, each batch at its position; the query cache embeds each text once
// and returns the vectors the model gives.
func TestSearchBatches(t *testing.T) {
	emb := testEmbedder(t)
	ctx := context.Background()
	ix, err := Build(ctx, openCorpus(t, writeJSONL(t, scifactDocs(t, 10)), corpus.Options{}), Config{Embedder: emb, Windows: testWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	queries := []string{"cell biology", "protein folding", "vaccine", "cancer risk", "cell biology", "mutation", "dna repair"}
	all, err := searchChunks(ctx, ix, queries, 20)
	if err != nil {
		t.Fatal(err)
	}
	count := &countingEmbedder{Embedder: emb}
	cache := NewQueryCache(count)
	for run := range 2 {
		var starts []int
		_, err = ix.SearchBatches(ctx, queries, BatchOptions{Batch: 3, ChannelK: 20, Queries: cache}, func(lo int, ch *ChunkHits) error {
			starts = append(starts, lo)
			for w := range ch.Hits {
				k := all.Hits[w].K
				if !slices.Equal(ch.Hits[w].Docs, all.Hits[w].Docs[lo*k:(lo+ch.NQ)*k]) || !slices.Equal(ch.Hits[w].Scores, all.Hits[w].Scores[lo*k:(lo+ch.NQ)*k]) {
					t.Errorf("run %d, batch at %d, window %d: the lists differ from one search of all", run, lo, w)
				}
			}
			return nil
		})
		if err != nil || !slices.Equal(starts, []int{0, 3, 6}) {
			t.Fatalf("run %d: batches at %v, %v", run, starts, err)
		}
	}
	// The repeat of "cell biology" in the second batch is remembered from
	// the first; the second run embeds nothing.
	if count.queries != 6 || cache.Len() != 6 {
		t.Errorf("embedded %d query texts, %d remembered; want 6 and 6", count.queries, cache.Len())
	}
	_, err = ix.SearchBatches(ctx, append(slices.Clone(queries), " "), BatchOptions{Batch: 3}, func(int, *ChunkHits) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "queries 7 to 8: msrag: query 1 is empty") {
		t.Errorf("an empty query: %v", err)
	}
}

// searchChunks embeds the queries (when the index has a model) and returns
// the channelK best rows of every channel the index can search.
func searchChunks(ctx context.Context, ix *Index, queries []string, channelK int) (*ChunkHits, error) {
	q, err := ix.queries(ctx, queries, nil, ix.layout.Needs(allOf(ix.layout)))
	if err != nil {
		return nil, err
	}
	return ix.searchQueries(ctx, q, channelK, nil)
}

// TestSearchBatchesOfKindsOpened: an index opened for a kind that searches
// by the query texts alone (OpenOptions.Kinds) has no model attached, and
// SearchBatches searches that kind without embedding the queries, giving
// its lists as the whole index gives them.
func TestSearchBatchesOfKindsOpened(t *testing.T) {
	docs := scifactDocs(t, 40)
	whole, dir := buildLexical(t, docs, DefaultLexical())
	queries := lexicalQueries(docs, 5)
	want, err := searchChunks(context.Background(), whole, queries, 10)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := OpenWith(OpenOptions{Kinds: []ChannelKind{Lexical}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	_, err = ix.SearchBatches(context.Background(), queries, BatchOptions{ChannelK: 10}, func(_ int, ch *ChunkHits) error {
		for c, l := range ch.Layout {
			if l.Kind != Lexical {
				if ch.Hits[c].K != 0 {
					t.Errorf("channel %s of a kind not opened was searched", l.Name())
				}
				continue
			}
			if !slices.Equal(ch.Hits[c].Docs, want.Hits[c].Docs) || !slices.Equal(ch.Hits[c].Scores, want.Hits[c].Scores) {
				t.Errorf("channel %s: the lists differ from the whole index's", l.Name())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
