package msrag

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/internal/testkind"
)

// TestNewKindOfChannel checks that a kind of channel registered by a
// package of its own (internal/testkind) is built beside the dense and
// lexical windows, written in format 5, opened again, searched alone and
// fused with the other kinds, and that three shards rank exactly as one
// index: its scores are small integers, so ties at every shard's k-th
// place are the rule.
func TestNewKindOfChannel(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 240)
	path := writeJSONL(t, docs)
	ctx := context.Background()
	cfg := func(out, shard string) Config {
		return Config{Embedder: emb, Windows: testWindows, Out: out, Shard: shard,
			Channels: withLexical(DefaultLexical(), testkind.Kind.Params())}
	}
	oneDir := filepath.Join(t.TempDir(), "one")
	one, err := Build(ctx, openCorpus(t, path, corpus.Options{BlockLines: 40}), cfg(oneDir, ""))
	if err != nil {
		t.Fatal(err)
	}
	one.Close()
	m, err := ReadManifest(oneDir)
	if err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != indexfile.ChannelsFormatVersion || m.Channels[testkind.Name] == nil || m.Lexical == nil {
		t.Fatalf("manifest format %d, channels %s", m.FormatVersion, m.Channels)
	}
	if one, err = OpenWith(OpenOptions{Embedder: emb}, oneDir); err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	want := LayoutOf(testWindows, Dense, Lexical, testkind.Kind)
	if d := one.Layout().Diff(want); !d.Same() || d.Reordered {
		t.Fatalf("layout %s, want %s", one.Layout(), want)
	}
	if f := fusion.Default(one.Layout()); f.String() != fusion.DefaultHybrid {
		t.Errorf("default fusion %s", f)
	}
	dirs := buildShards(t, path, t.TempDir(), 3, 40, cfg("", ""))
	sharded, err := OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	queries := lexicalQueries(docs, 30)
	for _, fusion := range []string{"ovl-w16", "ovl-w64", "rrf:windows=overlap", "rrf:windows=all", "combsum:windows=ovl-w32+bm25-w32+w32,norm=minmax"} {
		sameSearch(t, one, sharded, queries, fusion)
	}
	hits, err := one.Search(ctx, queries[:1], SearchOptions{Fusion: mustFusion(t, "ovl-w32"), K: 3})
	if err != nil || len(hits[0]) == 0 {
		t.Fatalf("search of ovl-w32: %v, %v", hits, err)
	}
	if ev := hits[0][0].Evidence[0]; ev.Channel.Kind != testkind.Kind || ev.ChunkScore < 1 {
		t.Errorf("evidence %+v", ev)
	}
	// The kind's channels in a fusion model file read back.
	data, err := json.Marshal(one.Layout())
	if err != nil {
		t.Fatal(err)
	}
	var back Layout
	if err := json.Unmarshal(data, &back); err != nil || !back.Diff(one.Layout()).Same() {
		t.Errorf("layout %s read back as %s: %v", data, back, err)
	}
}

// TestUnknownKindRefused checks that an index with channels of a kind this
// msrag does not know is refused by name, and that a fusion naming a kind
// an index lacks says how such an index is built.
func TestUnknownKindRefused(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 40)
	out := filepath.Join(t.TempDir(), "idx")
	ix, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs), corpus.Options{}),
		Config{Embedder: emb, Windows: testWindows, Out: out, Channels: withLexical(nil, testkind.Kind.Params())})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	editManifest(t, out, func(m map[string]any) {
		ch := m["channels"].(map[string]any)
		ch["sparse"] = ch[testkind.Name]
	})
	if _, err := OpenWith(OpenOptions{Embedder: emb}, out); !errors.Is(err, indexfile.ErrUnknownKind) || !strings.Contains(err.Error(), `kind "sparse"`) {
		t.Errorf("unknown kind: %v", err)
	}
	plain, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs), corpus.Options{}), Config{Embedder: emb, Windows: testWindows})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, f := range []string{"ovl-w16", "rrf:windows=overlap"} {
		if err := plain.CheckFusion(mustFusion(t, f)); !errors.Is(err, testkind.ErrNone) || !strings.Contains(err.Error(), "has no overlap windows") {
			t.Errorf("%s on an index without the kind: %v", f, err)
		}
	}
	if _, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs), corpus.Options{}),
		Config{Embedder: emb, Windows: testWindows, Channels: []channel.Params{testkind.Kind.Params(), testkind.Kind.Params()}}); err == nil {
		t.Error("a kind given twice was built")
	}
	if _, ok := channel.Lookup(testkind.Name); !ok {
		t.Error("the kind is not registered")
	}
	os.RemoveAll(out)
}
