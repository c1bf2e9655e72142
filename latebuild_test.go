package msrag

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/late"
)

// rowVectors returns, for every row of window wi of ix's first shard, the
// vector want gives for its chunk (document id and content tokens).
func rowVectors(ix *Index, wi int, want func(doc string, tokens chunk.Span) []float32) []float32 {
	sh := ix.shards[0]
	t := sh.windows()[wi].chunks
	var out []float32
	for r := range t.Len() {
		out = append(out, want(sh.ids[t.Doc[r]], chunk.Span{Start: int(t.TokStart[r]), End: int(t.TokEnd[r])})...)
	}
	return out
}

// checkRows searches every window of ix's first shard for the vector want
// gives each of its rows and fails unless the row itself comes back among the
// first ten with a score (a cosine: the vectors are normalised) of at least
// minCos. It returns the lowest such score.
func checkRows(t *testing.T, ix *Index, minCos float64, want func(doc string, tokens chunk.Span) []float32) float64 {
	t.Helper()
	lowest := 1.0
	for wi, w := range ix.shards[0].windows() {
		vecs := rowVectors(ix, wi, want)
		const k = 10
		dist, labels, err := w.index.Search(vecs, k)
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for r := range w.chunks.Len() {
			score := -1.0
			for j := range k {
				if labels[r*k+j] == int64(r) {
					score = float64(dist[r*k+j])
				}
			}
			lowest = min(lowest, score)
			if score < minCos {
				if bad++; bad <= 5 {
					t.Errorf("window %s row %d (doc %d tokens %d-%d): cosine %.7f with the wanted vector, want >= %g",
						w.spec.Name(), r, w.chunks.Doc[r], w.chunks.TokStart[r], w.chunks.TokEnd[r], score, minCos)
				}
			}
		}
	}
	return lowest
}

// docIDs returns every document's content token ids by its id.
func docIDs(emb Embedder, docs []testDoc) map[string][]int32 {
	ids := map[string][]int32{}
	for _, d := range docs {
		text := corpus.Doc{Title: d.Title, Text: d.Text}.Full()
		ids[d.ID] = emb.Tokenizer().EncodeWith(text, tokenizerNoSpecial).IDs
	}
	return ids
}

// With the hash embedder a token's vector ignores its context, so a late
// window's vector must equal the independent one: this checks the segments'
// plumbing (pieces that tile each window, segment indices across many small
// batches and several workers), not the choice of segment.
func TestLateBuildPoolsEveryWindowsTokens(t *testing.T) {
	emb, err := hashembed.NewHash(testTokenizer(t), 32, 48) // segments of 46 content tokens
	if err != nil {
		t.Fatal(err)
	}
	docs := scifactDocs(t, 80)
	path := writeJSONL(t, docs)
	windows := []chunk.Window{{Size: 8, Stride: 4}, {Size: 20}, {Size: 40}, chunk.Full}
	ix, stats, err := BuildWithStats(context.Background(), openCorpus(t, path, corpus.Options{}),
		Config{Embedder: emb, Windows: windows, Embedding: Late, BatchTokens: 300, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	tokens := docIDs(emb, docs)
	ctx := context.Background()
	checkRows(t, ix, 0.99999, func(doc string, span chunk.Span) []float32 {
		v, err := emb.EmbedChunks(ctx, []embed.Chunk{{IDs: tokens[doc][span.Start:span.End]}}, embed.Passage)
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
	// The build embedded each document's segments once: at least the
	// corpus's tokens, fewer than the windows hold.
	var content, windowed int64
	for _, d := range docs {
		content += int64(len(tokens[d.ID]))
	}
	for _, w := range ix.shards[0].windows() {
		for r := range w.chunks.Len() {
			windowed += int64(w.chunks.TokEnd[r] - w.chunks.TokStart[r])
		}
	}
	if stats.Tokens < content || stats.Tokens >= windowed {
		t.Errorf("late build embedded %d tokens for a corpus of %d in windows of %d", stats.Tokens, content, windowed)
	}
	m := ix.Manifest()
	if m.Embedding != "late" || m.Late == nil || m.Late.SegmentTokens != 46 || m.Late.Overlap != 11 || m.Late.SequenceTokens != 48 || m.Late.Edges != "segment" {
		t.Errorf("manifest records embedding %q, late %+v", m.Embedding, m.Late)
	}
}

// clsHash is the hash embedder claiming another pooling.
type clsHash struct {
	*hashembed.Hash
	pooling embed.Pooling
}

func (c clsHash) Spec() embed.Spec {
	s := c.Hash.Spec()
	s.Pooling = c.pooling
	return s
}

// vectorsOnly hides the hash embedder's token states.
type vectorsOnly struct{ embed.Embedder }

func TestLateBuildRefusals(t *testing.T) {
	emb := testEmbedder(t) // 128 tokens: 126 content tokens
	path := writeJSONL(t, scifactDocs(t, 5))
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"cls model":         {Config{Embedder: clsHash{emb, embed.PoolCLS}, Embedding: Late}, "[CLS] token's (cls pooling)"},
		"pooled model":      {Config{Embedder: clsHash{emb, embed.PoolNone}, Embedding: Late}, "one vector per text"},
		"no token states":   {Config{Embedder: vectorsOnly{emb}, Embedding: Late}, "does not hand them back"},
		"window too long":   {Config{Embedder: emb, Embedding: Late, Windows: chunk.Sizes(16, 127)}, "exceeds the model's maximum"},
		"overlap = segment": {Config{Embedder: emb, Embedding: Late, LateOverlap: 126}, "the overlap must be"},
		"negative overlap":  {Config{Embedder: emb, Embedding: Late, LateOverlap: -1}, "late overlap -1"},
		"overlap, not late": {Config{Embedder: emb, LateOverlap: 10}, "for late embedding only"},
		"edges, not late":   {Config{Embedder: emb, LateEdges: late.EdgesNone}, "for late embedding only"},
		"unknown mode":      {Config{Embedder: emb, Embedding: Embedding(7)}, "Embedding(7)"},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.Out = filepath.Join(t.TempDir(), "idx")
			if tc.cfg.Windows == nil {
				tc.cfg.Windows = testWindows
			}
			_, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if IsIndex(tc.cfg.Out) {
				t.Errorf("%s was written", tc.cfg.Out)
			}
		})
	}
}

func TestShardsOfDifferentEmbeddingsRefused(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 40))
	base := t.TempDir()
	var dirs []string
	for i, mode := range []Embedding{Independent, Late} {
		dir := filepath.Join(base, mode.String())
		ix, err := Build(context.Background(), openCorpus(t, path, corpus.Options{BlockLines: 10, Shard: corpus.Shard{I: i, N: 2}}),
			Config{Embedder: emb, Windows: testWindows, Out: dir, Shard: fmt.Sprintf("%d/2", i), Embedding: mode})
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		dirs = append(dirs, dir)
	}
	_, err := OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "embedded differently (independent, late (segments of 126 tokens") {
		t.Fatalf("opening an independent and a late shard together: %v", err)
	}
	for _, d := range dirs {
		ix, err := OpenWith(OpenOptions{Embedder: emb}, d)
		if err != nil {
			t.Fatalf("opening %s alone: %v", d, err)
		}
		ix.Close()
	}
}

func TestParseEmbedding(t *testing.T) {
	for s, want := range map[string]Embedding{"": Independent, "independent": Independent, "late": Late} {
		if got, err := ParseEmbedding(s); err != nil || got != want {
			t.Errorf("ParseEmbedding(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseEmbedding("contextual"); err == nil || !strings.Contains(err.Error(), "want independent or late") {
		t.Errorf("ParseEmbedding(contextual): %v", err)
	}
}
