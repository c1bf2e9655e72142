package msrag

import (
	"context"
	"fmt"
	"math"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/fuse"
)

// SearchOptions says how to search. The zero value searches every window for
// its top 100 chunks and fuses them with RRF (c = 1, ranks from 0) into 10
// documents.
type SearchOptions struct {
	// K is the number of documents returned per query; default 10.
	K int
	// WindowK is the number of chunks each window's index returns; default 100.
	WindowK int
	// Fusion is the rule that turns the windows' chunk lists into documents.
	Fusion Fusion
	// SkipTerms leaves Evidence.Terms nil. Finding the query terms a
	// lexical chunk holds decodes those terms' postings again, which can
	// cost more than the search; a caller that does not show them (msrag
	// search's TREC output) skips it.
	SkipTerms bool
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.K <= 0 {
		o.K = 10
	}
	if o.WindowK <= 0 {
		o.WindowK = 100
	}
	return o
}

// MaxWindowK returns the most chunks any window holds over all shards (at
// least 1): no window's list can be longer.
func (ix *Index) MaxWindowK() int {
	most := int64(1)
	for wi := range ix.man.Windows {
		var n int64
		for _, sh := range ix.shards {
			n += int64(sh.windows[wi].chunks.Len())
		}
		most = max(most, n)
	}
	return int(min(most, math.MaxInt32))
}

// Clamp returns opts with its defaults filled in, K at most the number of
// documents and WindowK at most MaxWindowK, so that what a search allocates
// follows the index, not the numbers asked for.
func (ix *Index) Clamp(opts SearchOptions) SearchOptions {
	opts = opts.withDefaults()
	opts.K = min(opts.K, max(ix.NumDocs(), 1))
	opts.WindowK = min(opts.WindowK, ix.MaxWindowK())
	return opts
}

// Hit is one document in a query's fused ranking.
type Hit struct {
	DocID    string
	Doc      int     // document index in the index
	Score    float64 // fused score
	Rank     int     // from 1
	Evidence []Evidence
}

// Evidence is a chunk that voted for a document.
type Evidence struct {
	// Channel is the channel that ranked the chunk: its kind and window
	// (the whole-document lexical channel has the zero window, and spans
	// the document from 0 to the end of its last token).
	Channel    Channel
	Window     chunk.Window // the window the chunk came from (Channel.Window)
	ChunkRank  int          // the chunk's rank in that window's list, from 1
	ChunkScore float32      // its similarity (inner product; minus the distance for L2)
	Start, End int64        // its byte span in the document's text (title + " " + text)
	// Terms are, for a lexical channel's chunk, the query's terms it holds
	// (in the query's order; lexical.Index.Explain); nil for a dense one.
	Terms []string
}

// ChunkHits is what every window's index returned for a batch of queries, with
// chunks already mapped to documents: the input of fusion. One ChunkHits can be
// fused many ways without searching again.
type ChunkHits struct {
	NQ     int
	Layout Layout      // the index's channels
	Hits   []fuse.Hits // per channel; Docs are document indices, -1 for none
	// Start and End are the byte spans of the chunks, parallel to Hits[w].Docs.
	Start, End [][]int64
	// Queries holds the query vectors searched (NQ rows of Dims), which a
	// learned router reads.
	Queries []float32
	Dims    int

	// lex is what explains the lexical channels' hits (SearchLexical).
	lex *lexicalTrace
}

// Search embeds the queries once, searches every window and fuses the
// results. An index without dense windows embeds nothing: it searches its
// lexical channels with the query texts.
func (ix *Index) Search(ctx context.Context, queries []string, opts SearchOptions) ([][]Hit, error) {
	opts = ix.Clamp(opts)
	if err := ix.CheckFusion(opts.Fusion); err != nil {
		return nil, err
	}
	ch, err := ix.searchChunks(ctx, queries, opts.WindowK, opts.Fusion.lexical() || !ix.Dense())
	if err != nil {
		return nil, err
	}
	return ix.Fuse(ch, opts)
}

// EmbedQueries embeds a batch of queries with the index's model (query role).
func (ix *Index) EmbedQueries(ctx context.Context, queries []string) ([]float32, error) {
	if err := checkQueries(queries); err != nil {
		return nil, err
	}
	if !ix.Dense() {
		return nil, fmt.Errorf("msrag: index %s has no model to embed queries with (built with --model none): %w", ix.where(), ErrNoDense)
	}
	return ix.emb.Embed(ctx, queries, embed.Query)
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

// SearchChunks embeds the queries and returns each channel's top windowK
// chunks: SearchVectors, then SearchLexical with the texts when the index
// has lexical windows.
func (ix *Index) SearchChunks(ctx context.Context, queries []string, windowK int) (*ChunkHits, error) {
	return ix.searchChunks(ctx, queries, windowK, ix.lexicalUsable())
}

// lexicalUsable reports whether the index has lexical windows it can
// search (built with them, by an analyzer this msrag produces).
func (ix *Index) lexicalUsable() bool { return ix.lex != nil && ix.lex.err == nil }

// searchChunks is SearchChunks, searching the lexical channels only when
// lex is set (a dense fusion does not wait for them).
func (ix *Index) searchChunks(ctx context.Context, queries []string, windowK int, lex bool) (*ChunkHits, error) {
	if len(queries) == 0 {
		return ix.newChunkHits(0), nil
	}
	if !ix.Dense() {
		return ix.searchTexts(ctx, queries, windowK)
	}
	vecs, err := ix.EmbedQueries(ctx, queries)
	if err != nil {
		return nil, err
	}
	ch, err := ix.SearchVectors(ctx, vecs, windowK)
	if err != nil {
		return nil, err
	}
	if lex {
		if err := ix.SearchLexical(ctx, queries, ch, windowK); err != nil {
			return nil, err
		}
	}
	return ch, nil
}

// searchTexts searches the lexical channels of an index without dense
// windows with the query texts: nothing is embedded.
func (ix *Index) searchTexts(ctx context.Context, queries []string, windowK int) (*ChunkHits, error) {
	if err := checkQueries(queries); err != nil {
		return nil, err
	}
	ch := ix.newChunkHits(len(queries))
	if err := ix.SearchLexical(ctx, queries, ch, windowK); err != nil {
		return nil, err
	}
	return ch, nil
}

func (ix *Index) onGPU() bool {
	if len(ix.shards) == 0 || len(ix.shards[0].windows) == 0 || ix.shards[0].windows[0].index == nil {
		return false
	}
	return ix.shards[0].windows[0].index.OnGPU()
}

func (ix *Index) newChunkHits(nq int) *ChunkHits {
	layout := ix.Layout()
	nw := len(layout)
	return &ChunkHits{NQ: nq, Layout: layout, Hits: make([]fuse.Hits, nw),
		Start: make([][]int64, nw), End: make([][]int64, nw)}
}

// SearchVectors searches every dense window (in parallel) with already
// embedded queries and maps the chunks to documents; the lexical channels,
// which need the query texts, are left to SearchLexical. With several shards, each window's
// lists are merged by score (see mergeShards). windowK is clamped as Clamp
// clamps SearchOptions.WindowK.
func (ix *Index) SearchVectors(ctx context.Context, vecs []float32, windowK int) (*ChunkHits, error) {
	if !ix.Dense() {
		return nil, fmt.Errorf("msrag: index %s has no dense windows to search by vector (built with --model none): %w", ix.where(), ErrNoDense)
	}
	windowK = ix.Clamp(SearchOptions{WindowK: windowK}).WindowK
	dims := ix.man.Model.Dims
	if len(vecs)%dims != 0 {
		return nil, fmt.Errorf("msrag: %d floats is not a whole number of %d-dim vectors", len(vecs), dims)
	}
	if windowK > faiss.MaxGPUK && ix.onGPU() {
		return nil, fmt.Errorf("msrag: window k %d is more than FAISS on GPUs returns (%d); search with a smaller window k", windowK, faiss.MaxGPUK)
	}
	out := ix.newChunkHits(len(vecs) / dims)
	out.Queries, out.Dims = vecs, dims
	g, gctx := errgroup.WithContext(ctx)
	for wi := range ix.man.Windows {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return ix.searchWindow(wi, vecs, windowK, out)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// searchWindow searches window wi of every shard and merges the lists into
// out.
func (ix *Index) searchWindow(wi int, vecs []float32, windowK int, out *ChunkHits) error {
	lists := make([]shardHits, len(ix.shards))
	l2 := ix.man.Metric == faiss.L2.String()
	for si, sh := range ix.shards {
		w := sh.windows[wi]
		k := searchK(windowK, w.index)
		dist, labels, err := searchShard(w, vecs, k)
		if err != nil {
			return err
		}
		lists[si] = shardHits{k: k, sh: sh, w: w, dist: dist, labels: labels, l2: l2}
	}
	nq := out.NQ
	h := fuse.Hits{K: windowK, Docs: make([]int32, nq*windowK), Scores: make([]float32, nq*windowK)}
	start, end := make([]int64, nq*windowK), make([]int64, nq*windowK)
	if err := mergeShards(lists, vecs, nq, windowK, h, start, end); err != nil {
		return err
	}
	out.Hits[wi], out.Start[wi], out.End[wi] = h, start, end
	return nil
}
