package msrag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/internal/store"
)

// testWindowTokenizer is the tokenizer of testEmbedder, for an index
// without dense windows.
func testWindowTokenizer(t *testing.T) *WindowTokenizer {
	t.Helper()
	wt, err := LoadWindowTokenizer("bert-uncased-test", testTokenizer(t))
	if err != nil {
		t.Fatal(err)
	}
	return wt
}

// buildLexicalOnly builds docs without dense windows into a new directory.
func buildLexicalOnly(t *testing.T, path string, opts corpus.Options, shard string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "idx")
	ix, err := Build(context.Background(), openCorpus(t, path, opts),
		Config{Tokenizer: testWindowTokenizer(t), Windows: testWindows, Out: out, Shard: shard})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	return out
}

// TestLexicalOnlyLikeDenseBuild checks that an index built with a tokenizer
// and no embedder cuts the windows a build with a model of that tokenizer
// cuts (chunk tables and lexical files byte for byte), writes no FAISS
// file, records no model (format 4), opens without an embedder, and ranks
// by default as the dense build's rrf:windows=lexical.
func TestLexicalOnlyLikeDenseBuild(t *testing.T) {
	docs := scifactDocs(t, 80)
	dense, denseDir := buildLexical(t, docs, DefaultLexical())
	out := buildLexicalOnly(t, writeJSONL(t, docs), corpus.Options{}, "")
	man, err := ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if man.FormatVersion != indexfile.NoModelFormatVersion || !man.Model.None() || man.Model.Dims != 0 || man.Factory != "" || man.Lexical == nil ||
		man.Model.TokenizerSHA256 != dense.Manifest().Model.TokenizerSHA256 {
		t.Fatalf("manifest: format %d, model %+v, factory %q, lexical %v", man.FormatVersion, man.Model, man.Factory, man.Lexical != nil)
	}
	dm := dense.Manifest()
	for i, w := range man.Windows {
		if w.IndexFile != "" || w.Vectors != dm.Windows[i].Vectors {
			t.Errorf("window %d: %+v, the dense build's %+v", i, w, dm.Windows[i])
		}
		for _, f := range []string{w.ChunksFile, man.Lexical.Windows[i].File} {
			if !sameFile(t, filepath.Join(out, f), filepath.Join(denseDir, f)) {
				t.Errorf("%s differs from the dense build's", f)
			}
		}
	}
	if !sameFile(t, filepath.Join(out, man.Lexical.Doc.File), filepath.Join(denseDir, dm.Lexical.Doc.File)) {
		t.Errorf("%s differs from the dense build's", man.Lexical.Doc.File)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.faiss")); len(m) > 0 {
		t.Errorf("FAISS files written: %v", m)
	}
	ix, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.HasModel() || ix.emb != nil || ix.Layout().String() != "bm25-w16, bm25-w32, bm25-w64, bm25-doc" {
		t.Fatalf("dense %v, embedder %v, layout %s", ix.HasModel(), ix.emb, ix.Layout())
	}
	ctx := context.Background()
	queries := lexicalQueries(docs, 20)
	for _, f := range []struct{ only, dense string }{{"rrf", "rrf:windows=lexical"}, {"bm25-w32", "bm25-w32"}, {"combsum:norm=zscore", "combsum:norm=zscore,windows=lexical"}} {
		got, err := ix.Search(ctx, queries, SearchOptions{Fusion: mustFusion(t, f.only), K: 10, ChannelK: 30})
		if err != nil {
			t.Fatal(err)
		}
		want, err := dense.Search(ctx, queries, SearchOptions{Fusion: mustFusion(t, f.dense), K: 10, ChannelK: 30})
		if err != nil {
			t.Fatal(err)
		}
		for q := range queries {
			if len(want[q]) == 0 || !sameRanking(got[q], want[q]) {
				t.Errorf("%s query %d: %v, the dense build's %s %v", f.only, q, ids(got[q]), f.dense, ids(want[q]))
			}
		}
	}
	var batched [][]Hit
	_, err = ix.SearchBatches(ctx, queries, BatchOptions{Batch: 7, ChannelK: 30}, func(lo int, ch *ChunkHits) error {
		h, err := ix.Fuse(ch, SearchOptions{K: 10, ChannelK: 30})
		batched = append(batched, h...)
		return err
	})
	one, _ := ix.Search(ctx, queries, SearchOptions{K: 10, ChannelK: 30})
	if err != nil || len(batched) != len(one) || !slices.EqualFunc(batched, one, sameRanking) {
		t.Errorf("SearchBatches: %v, or its rankings differ from Search's", err)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	da, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(da, db)
}

// TestLexicalOnlyRefusals checks the plain refusals of an index without
// dense windows and of its configuration.
func TestLexicalOnlyRefusals(t *testing.T) {
	docs := scifactDocs(t, 20)
	path := writeJSONL(t, docs)
	out := buildLexicalOnly(t, path, corpus.Options{}, "")
	ix, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	for _, f := range []string{"w16", "rrf:windows=16+bm25-16", "rrf:windows=dense", "rrf:windows=all", "full"} {
		err := ix.CheckFusion(mustFusion(t, f))
		if !errors.Is(err, ErrNoModel) {
			t.Errorf("fusion %s: %v, want ErrNoModel", f, err)
		}
		if _, err := ix.Search(ctx, []string{"cell"}, SearchOptions{Fusion: mustFusion(t, f)}); !errors.Is(err, ErrNoModel) {
			t.Errorf("search with %s: %v, want ErrNoModel", f, err)
		}
	}
	if _, err := ix.embedQueries(ctx, []string{"cell"}, nil); !errors.Is(err, ErrNoModel) {
		t.Errorf("embedQueries: %v", err)
	}
	if _, err := ix.SearchVectors(ctx, make([]float32, 32), 10); !errors.Is(err, ErrNoModel) {
		t.Errorf("SearchVectors: %v", err)
	}
	if _, err := OpenWith(OpenOptions{Embedder: testEmbedder(t)}, out); !errors.Is(err, ErrNoModel) {
		t.Errorf("opened with an embedder: %v", err)
	}
	dense := filepath.Join(t.TempDir(), "dense")
	d, err := Build(ctx, openCorpus(t, path, corpus.Options{}), Config{Embedder: testEmbedder(t), Windows: testWindows, Out: dense, Channels: withLexical(DefaultLexical())})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := OpenWith(OpenOptions{Embedder: testEmbedder(t)}, dense, out); !errors.Is(err, ErrIndexMismatch) {
		t.Errorf("a dense shard with one without dense windows: %v", err)
	}
	wt := testWindowTokenizer(t)
	for name, cfg := range map[string]Config{
		"embedder and tokenizer": {Embedder: testEmbedder(t), Tokenizer: wt},
		"full window":            {Tokenizer: wt, Windows: []chunk.Window{{Size: 16}, chunk.Full}},
		"late":                   {Tokenizer: wt, Embedding: Late},
		"no tokenizer":           {Tokenizer: &WindowTokenizer{Name: "x"}},
	} {
		if _, err := Build(ctx, openCorpus(t, path, corpus.Options{}), cfg); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

// TestLexicalOnlyOpenChecks checks that a manifest claiming no model must
// say so wholly: format 4, no FAISS files, lexical windows; and that an
// index with dense windows is still written as format 3.
func TestLexicalOnlyOpenChecks(t *testing.T) {
	docs := scifactDocs(t, 20)
	_, denseDir := buildLexical(t, docs, DefaultLexical())
	if m, err := ReadManifest(denseDir); err != nil || m.FormatVersion != 3 {
		t.Fatalf("dense index: %v, format %d", err, m.FormatVersion)
	}
	out := buildLexicalOnly(t, writeJSONL(t, docs), corpus.Options{}, "")
	for name, edit := range map[string]func(m map[string]any){
		"format 3":     func(m map[string]any) { m["format_version"] = 3 },
		"format 5":     func(m map[string]any) { m["format_version"] = 5 },
		"dims":         func(m map[string]any) { m["model"].(map[string]any)["dims"] = 8 },
		"no lexical":   func(m map[string]any) { delete(m, "lexical") },
		"faiss file":   func(m map[string]any) { m["windows"].([]any)[0].(map[string]any)["index_file"] = "w16.faiss" },
		"no tokenizer": func(m map[string]any) { m["model"].(map[string]any)["tokenizer_sha256"] = "" },
	} {
		dir := filepath.Join(t.TempDir(), "copy")
		copyDir(t, out, dir)
		editManifest(t, dir, edit)
		if _, err := Open(dir); err == nil || !errors.Is(err, store.ErrBadManifest) && !errors.Is(err, ErrIndexMismatch) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLexicalOnlyShardsSearchLikeOneIndex checks that shards of an index
// without dense windows rank exactly as the one index of the whole corpus.
func TestLexicalOnlyShardsSearchLikeOneIndex(t *testing.T) {
	docs := scifactDocs(t, 300)
	for i := 0; i < 30; i += 3 { // ties across shards
		docs[i+150].Title, docs[i+150].Text = docs[i].Title, docs[i].Text
	}
	path := writeJSONL(t, docs)
	one, err := Open(buildLexicalOnly(t, path, corpus.Options{BlockLines: 40}, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	const n = 3
	var dirs []string
	for i := range n {
		dirs = append(dirs, buildLexicalOnly(t, path, corpus.Options{BlockLines: 40, Shard: corpus.Shard{I: i, N: n}}, fmt.Sprintf("%d/%d", i, n)))
	}
	sharded, err := OpenWith(OpenOptions{}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	queries := lexicalQueries(docs, 40)
	for _, fusion := range []string{"rrf", "bm25-w16", "bm25-doc", "combsum:norm=zscore"} {
		sameSearch(t, one, sharded, queries, fusion)
	}
}

// TestSkipTerms checks that SearchOptions.SkipTerms changes nothing but the
// lexical evidence's terms, which it leaves out.
func TestSkipTerms(t *testing.T) {
	docs := scifactDocs(t, 40)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	queries := lexicalQueries(docs, 10)
	opts := SearchOptions{Fusion: mustFusion(t, "rrf:windows=all"), K: 10, ChannelK: 20}
	with, err := ix.Search(context.Background(), queries, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.SkipTerms = true
	without, err := ix.Search(context.Background(), queries, opts)
	if err != nil {
		t.Fatal(err)
	}
	terms := 0
	for q := range with {
		for i := range with[q] {
			for j := range with[q][i].Evidence {
				if without[q][i].Evidence[j].Terms != nil {
					t.Fatalf("query %d: terms %q with SkipTerms", q, without[q][i].Evidence[j].Terms)
				}
				terms += len(with[q][i].Evidence[j].Terms)
				with[q][i].Evidence[j].Terms = nil
			}
		}
		if !sameRanking(with[q], without[q]) {
			t.Errorf("query %d: %v with SkipTerms, %v without", q, ids(without[q]), ids(with[q]))
		}
	}
	if terms == 0 {
		t.Error("no evidence terms without SkipTerms")
	}
}
