package msrag

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/lexical"
	"github.com/msrag/msrag/tokenizer"
)

// testTokenizer writes the BERT uncased tokenizer.json from the tokenizer's
// testdata into a temporary directory and returns its path.
func testTokenizer(tb testing.TB) string {
	tb.Helper()
	return testfiles.BERTUncased(tb, tb.TempDir())
}

func testEmbedder(tb testing.TB) *hashembed.Hash {
	tb.Helper()
	e, err := hashembed.NewHash(testTokenizer(tb), 32, 128)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

type testDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// scifactDocs reads the first n SciFact documents from the cache
// (testfiles.DataDir), or makes synthetic ones where SciFact is absent.
func scifactDocs(tb testing.TB, n int) []testDoc {
	tb.Helper()
	var docs []testDoc
	f, err := os.Open(filepath.Join(testfiles.DataDir("scifact"), "corpus.jsonl.gz"))
	if err != nil {
		words := strings.Fields("cell protein gene expression tumour mice patients risk study trial dose effect blood brain signal pathway receptor")
		for i := range n {
			var b strings.Builder
			for j := range 40 + (i*37)%300 {
				b.WriteString(words[(i*7+j*j)%len(words)])
				b.WriteByte(' ')
			}
			docs = append(docs, testDoc{ID: fmt.Sprint("d", i), Title: fmt.Sprint("T", i), Text: b.String()})
		}
		return docs
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && len(docs) < n {
		var d testDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

func writeJSONL(tb testing.TB, docs []testDoc) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "corpus.jsonl")
	var b strings.Builder
	for _, d := range docs {
		line, _ := json.Marshal(d)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func openCorpus(tb testing.TB, path string, opts corpus.Options) corpus.Reader {
	tb.Helper()
	r, err := corpus.Open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

var testWindows = chunk.Sizes(16, 32, 64)

func TestBuildSearchRoundTrip(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 200)
	path := writeJSONL(t, docs)
	out := filepath.Join(t.TempDir(), "idx")
	ctx := context.Background()

	ix, stats, err := BuildWithStats(ctx, openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Out: out, Windows: testWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if stats.Docs != int64(len(docs)) || ix.NumDocs() != len(docs) {
		t.Fatalf("docs: stats %d, index %d, want %d", stats.Docs, ix.NumDocs(), len(docs))
	}
	// Every window's vectors: the number of windows of that size over all
	// documents, counted here from token counts independently of the chunker.
	tok := emb.Tokenizer()
	for i, win := range testWindows {
		w := win.Size
		var want int64
		for _, d := range docs {
			text := d.Text
			if d.Title != "" {
				text = d.Title + " " + d.Text
			}
			n := tok.Count(text)
			want += int64((n + w - 1) / w)
		}
		if stats.Vectors[i] != want {
			t.Errorf("window %d: %d vectors, want %d", w, stats.Vectors[i], want)
		}
	}

	// A query that is a document's first 16-token window finds that document
	// first: its chunk in window 16 is an exact match.
	var queries []string
	for _, d := range docs[:20] {
		text := d.Title + " " + d.Text
		enc := tok.EncodeWith(text, tokenizerNoSpecial)
		queries = append(queries, text[:enc.Offsets[min(15, len(enc.Offsets)-1)].End])
	}
	hits, err := ix.Search(ctx, queries, SearchOptions{K: 5, Fusion: fusion.Single("w16")})
	if err != nil {
		t.Fatal(err)
	}
	for q, h := range hits {
		if len(h) == 0 || h[0].DocID != docs[q].ID {
			t.Errorf("query %d: top hit %+v, want %s", q, h, docs[q].ID)
			continue
		}
		ev := h[0].Evidence[0]
		if ev.Window.Size != 16 || ev.ChunkRank != 1 || ev.Start != 0 {
			t.Errorf("query %d: evidence %+v", q, ev)
		}
	}

	// The index on disk searches like the one in memory.
	re, err := OpenWith(OpenOptions{Embedder: emb}, out)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	for _, fusion := range []string{"rrf", "maxp", "w=32"} {
		a, err := ix.Search(ctx, queries, SearchOptions{Fusion: mustFusion(t, fusion)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := re.Search(ctx, queries, SearchOptions{Fusion: mustFusion(t, fusion)})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: reopened index ranks differently", fusion)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("build left %d entries beside the index", len(entries))
	}
}

func TestShardsSearchLikeOneIndex(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 300)
	path := writeJSONL(t, docs)
	ctx := context.Background()
	base := t.TempDir()

	one, err := Build(ctx, openCorpus(t, path, corpus.Options{BlockLines: 40}), Config{Embedder: emb, Windows: testWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	dirs := buildShards(t, path, base, 3, 40, Config{Embedder: emb, Windows: testWindows})
	sharded, err := OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	if sharded.NumDocs() != len(docs) {
		t.Fatalf("shards hold %d docs, want %d", sharded.NumDocs(), len(docs))
	}
	var queries []string
	for _, d := range docs[:60] {
		queries = append(queries, d.Title)
	}
	for _, fusion := range []string{"rrf", "maxp", "w=16", "w=64", "small batch"} {
		queries := queries
		if fusion == "small batch" {
			// Fewer than 20 queries: FAISS computes distances without BLAS.
			queries, fusion = queries[:7], "rrf"
		}
		f := mustFusion(t, fusion)
		a, err := one.Search(ctx, queries, SearchOptions{Fusion: f, K: 20, ChannelK: 50})
		if err != nil {
			t.Fatal(err)
		}
		b, err := sharded.Search(ctx, queries, SearchOptions{Fusion: f, K: 20, ChannelK: 50})
		if err != nil {
			t.Fatal(err)
		}
		for q := range a {
			if !sameRanking(a[q], b[q]) {
				t.Errorf("%s query %d: sharded %v, one index %v", fusion, q, ids(b[q]), ids(a[q]))
			}
		}
	}
}

var tokenizerNoSpecial = tokenizer.Options{NoSpecial: true, MaxLength: -1}

// buildShards builds n shards of the corpus at path (blocks of blockLines
// lines) with cfg into base/shard-i and returns their directories.
func buildShards(tb testing.TB, path, base string, n, blockLines int, cfg Config) []string {
	tb.Helper()
	var dirs []string
	for i := range n {
		c := cfg
		c.Out, c.Shard = filepath.Join(base, fmt.Sprint("shard-", i)), fmt.Sprintf("%d/%d", i, n)
		ix, err := Build(context.Background(), openCorpus(tb, path, corpus.Options{BlockLines: blockLines, Shard: corpus.Shard{I: i, N: n}}), c)
		if err != nil {
			tb.Fatal(err)
		}
		ix.Close()
		dirs = append(dirs, c.Out)
	}
	return dirs
}

func mustFusion(tb testing.TB, s string) fusion.Fusion {
	tb.Helper()
	f, err := fusion.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func ids(h []Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = fmt.Sprintf("%s:%.6g", x.DocID, x.Score)
	}
	return out
}

// sameRanking compares document ids, scores and evidence (not document indices,
// which differ between shards and one index).
func sameRanking(a, b []Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].DocID != b[i].DocID || a[i].Score != b[i].Score || !reflect.DeepEqual(a[i].Evidence, b[i].Evidence) {
			return false
		}
	}
	return true
}

func TestBuildConfigErrors(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 5))
	for name, w := range map[string][]chunk.Window{
		"zero": chunk.Sizes(0), "negative": chunk.Sizes(-5, 10), "duplicate": chunk.Sizes(16, 16), "too large": chunk.Sizes(200),
		"two full": {chunk.Full, {Size: 8, Truncate: true}},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "idx")
			_, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: w, Out: out})
			if err == nil {
				t.Fatalf("windows %v: no error", w)
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Errorf("windows %v: %s was written", w, out)
			}
		})
	}
}

func TestBuildCancelledLeavesNothing(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 300))
	out := filepath.Join(t.TempDir(), "idx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Build(ctx, openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Fatalf("cancelled build left %v", entries)
	}
}

func TestOpenChecks(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 30))
	out := filepath.Join(t.TempDir(), "idx")
	ix, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()

	t.Run("other model", func(t *testing.T) {
		other, err := hashembed.NewHash(testTokenizer(t), 16, 128)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := OpenWith(OpenOptions{Embedder: other}, out); !errors.Is(err, ErrIndexMismatch) {
			t.Fatalf("dims differ: %v", err)
		}
	})
	t.Run("corrupted file", func(t *testing.T) {
		p := filepath.Join(out, "w32.faiss")
		data, _ := os.ReadFile(p)
		data[len(data)/2] ^= 0xff
		os.WriteFile(p, data, 0o644)
		_, err := OpenWith(OpenOptions{Embedder: emb}, out)
		if !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "w32.faiss") {
			t.Fatalf("corrupted w32.faiss: %v", err)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		os.Remove(filepath.Join(out, "w16.chunks.parquet"))
		_, err := OpenWith(OpenOptions{Embedder: emb}, out)
		if err == nil || !strings.Contains(err.Error(), "w16.chunks.parquet") {
			t.Fatalf("missing chunks file: %v", err)
		}
	})
	t.Run("not an index", func(t *testing.T) {
		if _, err := OpenWith(OpenOptions{Embedder: emb}, t.TempDir()); err == nil {
			t.Fatal("empty directory opened as an index")
		}
	})
}

func TestBuildFull(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 80)
	path := writeJSONL(t, docs)
	windows := append(slices.Clone(testWindows), chunk.Full)
	ix, stats, err := BuildWithStats(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: windows})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	maxContent := emb.Spec().MaxContent(embed.Passage)
	if want := append(slices.Clone(testWindows), chunk.Window{Size: maxContent, Truncate: true}); !reflect.DeepEqual(windowsOf(ix.man), want) {
		t.Fatalf("windows %v, want %v", windowsOf(ix.man), want)
	}
	if got := stats.Vectors[len(testWindows)]; got != int64(len(docs)) {
		t.Fatalf("full window holds %d vectors, want one per document (%d)", got, len(docs))
	}
	// Unique chunks: the distinct token ranges of every window size (the
	// last moved back to end with the document) plus the truncated
	// document, counted here with a set.
	var want int64
	for _, d := range docs {
		n := emb.Tokenizer().Count(d.Title + " " + d.Text)
		seen := map[[2]int]bool{}
		for _, w := range testWindows {
			for s := 0; s < n; s += w.Size {
				seen[[2]int{max(0, min(s, n-w.Size)), min(s+w.Size, n)}] = true
			}
		}
		seen[[2]int{0, min(n, maxContent)}] = true
		want += int64(len(seen))
	}
	if stats.UniqueChunks != want {
		t.Errorf("%d unique chunks, want %d", stats.UniqueChunks, want)
	}
	hits, err := ix.Search(context.Background(), []string{docs[3].Title + " " + docs[3].Text}, SearchOptions{Fusion: fusion.Single("full"), K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if hits[0][0].DocID != docs[3].ID || hits[0][0].Evidence[0].Start != 0 {
		t.Errorf("full: a document's own text finds %+v", hits[0][0])
	}
	if _, err := ix.Search(context.Background(), []string{"x"}, SearchOptions{Fusion: fusion.Single("w126")}); err == nil {
		t.Error("w126 selected the full window")
	}
}

func TestBuildBadCorpus(t *testing.T) {
	emb := testEmbedder(t)
	dir := t.TempDir()
	t.Run("empty corpus", func(t *testing.T) {
		path := filepath.Join(dir, "empty.jsonl")
		os.WriteFile(path, nil, 0o644)
		out := filepath.Join(dir, "idx-empty")
		_, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out})
		if !errors.Is(err, corpus.ErrEmpty) || !strings.Contains(err.Error(), path) {
			t.Fatalf("empty corpus: %v", err)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Error("an index was written for an empty corpus")
		}
	})
	t.Run("empty texts and invalid UTF-8", func(t *testing.T) {
		path := filepath.Join(dir, "mixed.jsonl")
		data := `{"_id": "a", "text": "good text here"}` + "\n" +
			`{"_id": "b", "text": ""}` + "\n" +
			`{"_id": "c", "text": "bad ` + "\xff\xfe" + ` bytes"}` + "\n"
		os.WriteFile(path, []byte(data), 0o644)
		src := openCorpus(t, path, corpus.Options{})
		ix, stats, err := BuildWithStats(context.Background(), src, Config{Embedder: emb, Windows: testWindows})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		st := src.Stats()
		if stats.Docs != 2 || stats.Skipped != 1 || st.Empty != 1 || st.InvalidUTF8 != 1 {
			t.Fatalf("docs %d, skipped %d, stats %+v", stats.Docs, stats.Skipped, st)
		}
	})
	t.Run("duplicate ids", func(t *testing.T) {
		path := filepath.Join(dir, "dup.jsonl")
		os.WriteFile(path, []byte(`{"_id": "a", "text": "one"}`+"\n"+`{"_id": "a", "text": "two"}`+"\n"), 0o644)
		_, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: testWindows})
		if !errors.Is(err, corpus.ErrDuplicateID) {
			t.Fatalf("duplicate ids: %v", err)
		}
	})
}

// TestTailRecorded builds with both tails: the manifest records each, an
// index reopened has the windows it was built with, a manifest from before
// the tail was recorded reads as short tails, and shards of different tails
// are not searched together.
func TestTailRecorded(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 30))
	base := t.TempDir()
	var dirs []string
	for i, short := range []bool{false, true} {
		ws := chunk.Sizes(16, 40)
		for k := range ws {
			ws[k].ShortTail = short
		}
		dir := filepath.Join(base, fmt.Sprint("tail-", short))
		ix, err := Build(context.Background(), openCorpus(t, path, corpus.Options{BlockLines: 10, Shard: corpus.Shard{I: i, N: 2}}),
			Config{Embedder: emb, Windows: append(ws, chunk.Full), Out: dir, Shard: fmt.Sprintf("%d/2", i)})
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		m, err := ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "aligned", true: "short"}[short]
		if m.Windows[0].Tail != want || m.Windows[1].Tail != want || m.Windows[2].Tail != "" {
			t.Errorf("tail %v: manifest records %q, %q, %q", short, m.Windows[0].Tail, m.Windows[1].Tail, m.Windows[2].Tail)
		}
		re, err := OpenWith(OpenOptions{Embedder: emb}, dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := windowsOf(re.man); !reflect.DeepEqual(got[:2], ws) {
			t.Errorf("tail %v: reopened windows %+v, want %+v", short, got[:2], ws)
		}
		re.Close()
		dirs = append(dirs, dir)
	}
	if _, err := OpenWith(OpenOptions{Embedder: emb}, dirs...); !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "different windows") {
		t.Errorf("shards of two tails together: %v", err)
	}
	// Before the tail was recorded: no "tail" field, short tails.
	old := WindowInfo{Size: 16, Stride: 16}
	if w := old.Window(); !w.ShortTail || w.Size != 16 || w.Stride != 0 {
		t.Errorf("a window without a recorded tail reads as %+v, want a short tail", w)
	}
}

// TestBuildRefusesBM25OutOfRange: k1 Inf built the whole index and failed
// writing the manifest; k1 1e300 built one scoring every document 0. Both
// are refused before any work, and nothing is written.
func TestBuildRefusesBM25OutOfRange(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 5))
	for _, p := range []lexical.BM25{{K1: math.Inf(1), B: 0.4}, {K1: 1e300, B: 0.4}, {K1: 0.9, B: math.NaN()}} {
		out := filepath.Join(t.TempDir(), "idx")
		_, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out,
			Channels: withLexical(&LexicalConfig{Analyzer: lexical.English, BM25: p})})
		if err == nil || !strings.Contains(err.Error(), "want a number from 0 to") {
			t.Errorf("k1 %v, b %v: %v, want a refusal", p.K1, p.B, err)
		}
		if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
			t.Errorf("k1 %v, b %v: left %v", p.K1, p.B, entries)
		}
	}
}
