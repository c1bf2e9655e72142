package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/lexical"
	"github.com/msrag/msrag/tokenizer"
)

// spanEmbedder gives each chunk a vector that only its ids make: their count,
// first id, last id and sum, so a window's row can be told from its vector.
type spanEmbedder struct{ tok *tokenizer.Tokenizer }

const spanDims = 4

func spanVector(ids []int32) []float32 {
	var sum float32
	for _, id := range ids {
		sum += float32(id)
	}
	return []float32{float32(len(ids)), float32(ids[0]), float32(ids[len(ids)-1]), sum}
}

func (e *spanEmbedder) Spec() embed.Spec {
	return embed.Spec{Name: "span", Dims: spanDims, MaxTokens: 64, SpecialTokens: 2, Pooling: embed.PoolMean}
}
func (e *spanEmbedder) Tokenizer() *tokenizer.Tokenizer { return e.tok }
func (e *spanEmbedder) Close() error                    { return nil }
func (e *spanEmbedder) Embed(context.Context, []string, embed.Role) ([]float32, error) {
	return nil, errors.New("not for queries")
}
func (e *spanEmbedder) EmbedChunks(_ context.Context, chunks []embed.Chunk, _ embed.Role) ([]float32, error) {
	var out []float32
	for _, c := range chunks {
		out = append(out, spanVector(c.IDs)...)
	}
	return out, nil
}

// testCorpus writes docs (id -> text, in order) as JSON lines and opens them
// in batches of two documents.
func testCorpus(t *testing.T, ids, texts []string) corpus.Reader {
	t.Helper()
	return openBatch(t, ids, texts, 2)
}

func testDocs(n int) (ids, texts []string) {
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly hex jumbled vats")
	for i := range n {
		ids = append(ids, fmt.Sprintf("d%02d", n-i)) // not in sorted order: input order must hold
		texts = append(texts, strings.Join(words[:1+(i*5)%len(words)], " "))
	}
	return ids, texts
}

func newTestBuilder(t *testing.T, cfg Config) *Builder {
	t.Helper()
	tok, err := tokenizer.Load(testfiles.BERTUncased(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Embedder = &spanEmbedder{tok: tok}
	if cfg.Windows == nil {
		cfg.Windows = chunk.Sizes(3, 5)
	}
	cfg.Kinds = append([]channel.Params{dense.Params{Factory: "Flat", Metric: faiss.L2, TrainSize: 1 << 16}}, cfg.Kinds...)
	cfg.BatchTokens, cfg.Workers = 7, 3
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// tableRows maps a window's rows to documents as the tables name them.
type tableRows struct{ t *store.ChunkTable }

func (r tableRows) Len() int                      { return r.t.Len() }
func (r tableRows) Doc(row int32) int32           { return r.t.Doc[row] }
func (r tableRows) Span(row int32) (int64, int64) { return r.t.ByteStart[row], r.t.ByteEnd[row] }

// docRows maps whole documents.
type docRows int

func (r docRows) Len() int                { return int(r) }
func (docRows) Doc(row int32) int32       { return row }
func (docRows) Span(int32) (int64, int64) { return 0, 0 }

// finish finishes the kinds' builders of res over its tables, to be closed
// when the test ends.
func finish(t *testing.T, res *Result) []channel.Shard {
	t.Helper()
	src := &channel.Source{Where: "the test", Windows: res.Windows, Docs: docRows(len(res.IDs))}
	for _, tb := range res.Tables {
		src.Rows = append(src.Rows, tableRows{tb})
	}
	var out []channel.Shard
	for _, kb := range res.Builders {
		p, err := kb.Finish(src)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		out = append(out, p)
	}
	return out
}

// TestRunFillsEveryWindow checks that every window's rows hold the vectors of
// the chunks its table names, documents in input order, and that a chunk two
// windows share is embedded once.
func TestRunFillsEveryWindow(t *testing.T) {
	ids, texts := testDocs(9)
	var last Progress
	b := newTestBuilder(t, Config{Progress: func(p Progress) { last = p }})
	res, err := b.Run(context.Background(), testCorpus(t, ids, texts))
	if err != nil {
		t.Fatal(err)
	}
	parts := finish(t, res)
	if !slices.Equal(res.IDs, ids) {
		t.Fatalf("documents %v, want input order %v", res.IDs, ids)
	}
	tok := b.cfg.Embedder.Tokenizer()
	rowIDs := func(ct *store.ChunkTable, r int64) []int32 {
		docIDs := tok.EncodeWith(texts[ct.Doc[r]], tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
		return docIDs[ct.TokStart[r]:ct.TokEnd[r]]
	}
	type span struct{ doc, start, end int32 }
	unique := map[span]bool{}
	rows := 0
	for wi, w := range res.Windows {
		ct, index := res.Tables[wi], dense.IndexOf(parts[0], wi)
		if n := index.Ntotal(); n != int64(ct.Len()) || n == 0 {
			t.Fatalf("window %s: %d vectors for %d chunk rows", w.Name(), n, ct.Len())
		}
		for r := range int64(ct.Len()) {
			ids := rowIDs(ct, r)
			if len(ids) > w.Size {
				t.Errorf("window %s row %d: %d tokens", w.Name(), r, len(ids))
			}
			// The nearest vector is this chunk's, or one of a chunk with
			// the same tokens (texts repeat words).
			dist, labels, err := index.Search(spanVector(ids), 1)
			if err != nil {
				t.Fatal(err)
			}
			if dist[0] != 0 || !slices.Equal(rowIDs(ct, labels[0]), ids) {
				t.Errorf("window %s row %d (document %d, tokens %d-%d): its vector is not there (nearest row %d at %g)",
					w.Name(), r, ct.Doc[r], ct.TokStart[r], ct.TokEnd[r], labels[0], dist[0])
			}
			unique[span{ct.Doc[r], ct.TokStart[r], ct.TokEnd[r]}] = true
			rows++
		}
	}
	if res.Unique != int64(len(unique)) || len(unique) >= rows {
		t.Errorf("%d unique chunks embedded; the tables hold %d distinct of %d rows", res.Unique, len(unique), rows)
	}
	if last.Docs != int64(len(ids)) || last.Chunks != res.Unique || last.Tokens != res.Tokens {
		t.Errorf("last progress %+v; want %d documents, %d chunks, %d tokens", last, len(ids), res.Unique, res.Tokens)
	}
}

func TestPrepareHookFailsTheBuild(t *testing.T) {
	ids, texts := testDocs(9)
	b := newTestBuilder(t, Config{PrepareHook: func(id string) error {
		if id == ids[4] {
			return errors.New("cannot be cut")
		}
		return nil
	}})
	res, err := b.Run(context.Background(), testCorpus(t, ids, texts))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", ids[4])) || !strings.Contains(err.Error(), "cannot be cut") {
		t.Fatalf("Run = %v, %v; want the error of document %s", res, err, ids[4])
	}
	if len(b.builders) == 0 {
		t.Error("a failed Run handed its builders on; the Builder must keep (and close) them")
	}
}

// TestPrepareStopsWithinABatch: a worker stops before the next document of
// its batch once the build is cancelled, not at the batch's end (a batch of
// 1,024 meeting transcripts takes seconds to tokenize).
func TestPrepareStopsWithinABatch(t *testing.T) {
	ids, texts := testDocs(60)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var seen atomic.Int32
	b := newTestBuilder(t, Config{PrepareHook: func(id string) error {
		if seen.Add(1) == 3 {
			cancel()
		}
		return nil
	}})
	src := openBatch(t, ids, texts, len(ids)) // one batch: one worker takes it all
	if _, err := b.Run(ctx, src); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if n := seen.Load(); n > 3 {
		t.Errorf("%d documents were prepared; the worker should stop at the cancel (document 3) instead of finishing its batch of %d", n, len(ids))
	}
}

// openBatch writes docs as JSON lines and opens them in batches of batch
// documents.
func openBatch(t *testing.T, ids, texts []string, batch int) corpus.Reader {
	t.Helper()
	var sb strings.Builder
	for i := range ids {
		line, _ := json.Marshal(map[string]string{"_id": ids[i], "text": texts[i]})
		sb.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "corpus.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := corpus.Open(path, corpus.Options{BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// TestTrainingTooFewVectors checks that an index that needs training and
// gets fewer vectors than it needs fails naming the window and the count.
func TestTrainingTooFewVectors(t *testing.T) {
	ids, texts := testDocs(2)
	b := newTestBuilder(t, Config{Windows: chunk.Sizes(50)})
	b.cfg.Kinds[0] = dense.Params{Factory: "IVF64,Flat", Metric: faiss.L2, TrainSize: 1 << 16}
	b.Close()
	nb, err := New(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	res, err := nb.Run(context.Background(), testCorpus(t, ids, texts))
	if err == nil {
		_, err = res.Builders[0].Finish(&channel.Source{Windows: res.Windows, Rows: []channel.RowMap{tableRows{res.Tables[0]}}})
	}
	if err == nil || !strings.Contains(err.Error(), "window w50") || !strings.Contains(err.Error(), "only 2 vectors to train on") {
		t.Fatalf("Run with 2 vectors for 64 lists = %v; want the window and the count named", err)
	}
}

func TestNewRejectsAWindowTooLong(t *testing.T) {
	tok, err := tokenizer.Load(testfiles.BERTUncased(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(Config{Embedder: &spanEmbedder{tok: tok}, Windows: chunk.Sizes(100), Kinds: []channel.Params{dense.Kind.Params()}})
	if err == nil || !strings.HasPrefix(err.Error(), "msrag: ") {
		t.Fatalf("New with a window of 100 tokens for a model of 64 = %v; want an error", err)
	}
}

// TestRunLexical checks that a Lexical build's window indices hold, row for
// row, the terms of the byte spans of the window's chunk table, and the
// document index the terms of each whole text in input order: each file is
// byte-equal to one built directly from those texts.
func TestRunLexical(t *testing.T) {
	ids, texts := testDocs(9)
	texts[3] = "the a of and" // stop words only: rows with no terms
	{
		b := newTestBuilder(t, Config{Kinds: []channel.Params{bm25.Config{Analyzer: lexical.English, BM25: lexical.DefaultBM25}}})
		res, err := b.Run(context.Background(), testCorpus(t, ids, texts))
		if err != nil {
			t.Fatal(err)
		}
		parts := finish(t, res)
		for wi, w := range res.Windows {
			var want lexical.Builder
			ct := res.Tables[wi]
			for r := range ct.Len() {
				text := texts[ct.Doc[r]][ct.ByteStart[r]:ct.ByteEnd[r]]
				if err := want.Add(r, lexical.English.Terms(text)); err != nil {
					t.Fatal(err)
				}
			}
			sameLexical(t, "window "+w.Name(), bm25.IndexOf(parts[1], wi), want.Build())
		}
		var want lexical.Builder
		for i, text := range texts {
			if err := want.Add(i, lexical.English.Terms(text)); err != nil {
				t.Fatal(err)
			}
		}
		sameLexical(t, "documents", bm25.IndexOf(parts[1], len(res.Windows)), want.Build())
	}
}

func sameLexical(t *testing.T, what string, got, want *lexical.Index) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no lexical index", what)
	}
	var g, w bytes.Buffer
	if _, err := got.WriteTo(&g); err != nil {
		t.Fatal(err)
	}
	if _, err := want.WriteTo(&w); err != nil {
		t.Fatal(err)
	}
	if got.Docs() == 0 || got.Tokens() == 0 || !bytes.Equal(g.Bytes(), w.Bytes()) {
		t.Errorf("%s: lexical index of %d rows, %d tokens; want %d rows, %d tokens, the same bytes", what, got.Docs(), got.Tokens(), want.Docs(), want.Tokens())
	}
}

// TestProgressTotals checks the totals a build's progress gives: the chunk
// count only once every document has been cut, then the exact number the
// build embeds, and the corpus file's bytes read out of its size.
func TestProgressTotals(t *testing.T) {
	ids, texts := testDocs(9)
	var all []Progress
	b := newTestBuilder(t, Config{Progress: func(p Progress) { all = append(all, p) }})
	res, err := b.Run(context.Background(), testCorpus(t, ids, texts))
	if err != nil {
		t.Fatal(err)
	}
	finish(t, res)
	if len(all) < 2 {
		t.Fatalf("%d progress reports", len(all))
	}
	if all[0].ChunksTotal != 0 {
		t.Errorf("first report (one batch read) gives a chunk total: %+v", all[0])
	}
	for i, p := range all {
		if p.ChunksTotal != 0 && p.ChunksTotal != res.Unique {
			t.Errorf("report %d: chunk total %d; the build embeds %d", i, p.ChunksTotal, res.Unique)
		}
		if p.BytesTotal <= 0 || p.BytesDone > p.BytesTotal || (i > 0 && p.BytesDone < all[i-1].BytesDone) {
			t.Errorf("report %d: %d of %d bytes read (before: %d)", i, p.BytesDone, p.BytesTotal, all[max(i-1, 0)].BytesDone)
		}
	}
	last := all[len(all)-1]
	if last.ChunksTotal != res.Unique || last.Chunks != res.Unique || last.BytesDone != last.BytesTotal {
		t.Errorf("last report %+v; want %d of %d chunks and the whole file read", last, res.Unique, res.Unique)
	}
}
