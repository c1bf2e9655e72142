package msrag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/lexical"
)

// buildLexical builds docs with lexical windows into a new directory.
func buildLexical(t *testing.T, docs []testDoc, lex *LexicalConfig) (*Index, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "idx")
	ix, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs), corpus.Options{}),
		Config{Embedder: testEmbedder(t), Windows: testWindows, Out: out, Channels: withLexical(lex)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, out
}

func lexicalBytes(t *testing.T, ix *lexical.Index) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := ix.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestLexicalStoredAndOpened checks that a build with lexical windows
// records them in the manifest, writes a file per window and one for the
// documents, and that the index opened from them holds, for every window,
// the terms of its chunk table's byte spans row for row, and for the
// documents their whole texts' terms.
func TestLexicalStoredAndOpened(t *testing.T) {
	docs := scifactDocs(t, 60)
	built, out := buildLexical(t, docs, DefaultLexical())
	man := built.Manifest()
	l := man.Lexical
	id := lexical.English.Identity()
	if l == nil || l.Analyzer.Name != id.Name || l.Analyzer.Version != id.Version || l.K1 != 0.9 || l.B != 0.4 {
		t.Fatalf("manifest's lexical section %+v", l)
	}
	ix, err := OpenWith(OpenOptions{Embedder: testEmbedder(t)}, out)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	sh := ix.shards[0]
	text := map[string]string{}
	for _, d := range docs {
		text[d.ID] = d.Title + " " + d.Text
	}
	for wi, w := range sh.windows() {
		f := l.Windows[wi]
		if f.File != w.spec.Name()+".bm25" || f.Rows != man.Windows[wi].Vectors || len(f.SHA256) != 64 {
			t.Errorf("window %s: manifest records %+v", w.spec.Name(), f)
		}
		var want lexical.Builder
		for r := range w.chunks.Len() {
			full := text[sh.ids[w.chunks.Doc[r]]]
			if err := want.Add(r, lexical.English.Terms(full[w.chunks.ByteStart[r]:w.chunks.ByteEnd[r]])); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(lexicalBytes(t, w.lex), lexicalBytes(t, want.Build())) {
			t.Errorf("window %s: the lexical rows are not the terms of the chunks' spans", w.spec.Name())
		}
	}
	var want lexical.Builder
	for i, docID := range sh.ids {
		if err := want.Add(i, lexical.English.Terms(text[docID])); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(lexicalBytes(t, sh.docLex()), lexicalBytes(t, want.Build())) || l.Doc.Rows != int64(len(docs)) {
		t.Error("the document lexical index is not the terms of the whole texts")
	}
}

// TestLexicalLeavesDenseAlone checks that lexical windows change no dense
// file: the FAISS indices and chunk tables are byte for byte those of a
// build without them.
func TestLexicalLeavesDenseAlone(t *testing.T) {
	docs := scifactDocs(t, 40)
	with, dw := buildLexical(t, docs, DefaultLexical())
	without, dn := buildLexical(t, docs, nil)
	if without.Manifest().Lexical != nil {
		t.Fatal("a build without lexical windows records some")
	}
	for i, w := range with.Manifest().Windows {
		wn := without.Manifest().Windows[i]
		if w.IndexSHA256 != wn.IndexSHA256 || w.ChunkSHA256 != wn.ChunkSHA256 {
			t.Errorf("window %d: dense files differ with lexical windows", i)
		}
	}
	for _, dir := range []string{dn, dw} {
		ix, err := OpenWith(OpenOptions{Embedder: testEmbedder(t)}, dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		ix.Close()
	}
}

// editManifest rewrites the manifest of the index in dir through edit.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	data, _ = json.Marshal(m)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLexicalOpenChecks checks what opening refuses: a damaged lexical
// file, a manifest whose lexical rows do not match the window; and that an
// analyzer of another version opens, its lexical windows marked unusable.
func TestLexicalOpenChecks(t *testing.T) {
	docs := scifactDocs(t, 30)
	emb := testEmbedder(t)
	t.Run("other analyzer version", func(t *testing.T) {
		_, out := buildLexical(t, docs, DefaultLexical())
		editManifest(t, out, func(m map[string]any) {
			m["lexical"].(map[string]any)["analyzer"].(map[string]any)["version"] = "0 other"
		})
		ix, err := OpenWith(OpenOptions{Embedder: emb}, out)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		if err := ix.usable(slices.Index(ix.kinds, Lexical)); !errors.Is(err, lexical.ErrAnalyzer) || !errors.Is(err, ErrIndexMismatch) {
			t.Fatalf("analyzer of another version: %v", err)
		}
	})
	t.Run("corrupted file", func(t *testing.T) {
		_, out := buildLexical(t, docs, DefaultLexical())
		p := filepath.Join(out, "w32.bm25")
		data, _ := os.ReadFile(p)
		data[len(data)/2] ^= 0xff
		os.WriteFile(p, data, 0o644)
		_, err := OpenWith(OpenOptions{Embedder: emb}, out)
		if !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "w32.bm25") {
			t.Fatalf("corrupted w32.bm25: %v", err)
		}
	})
	t.Run("rows", func(t *testing.T) {
		_, out := buildLexical(t, docs, DefaultLexical())
		editManifest(t, out, func(m map[string]any) {
			m["lexical"].(map[string]any)["doc"].(map[string]any)["rows"] = 3
		})
		if _, err := OpenWith(OpenOptions{Embedder: emb}, out); err == nil || !strings.Contains(err.Error(), "lexical.doc") {
			t.Fatalf("3 document rows: %v", err)
		}
	})
	t.Run("shards with and without", func(t *testing.T) {
		_, a := buildLexical(t, docs[:15], DefaultLexical())
		_, b := buildLexical(t, docs[15:], nil)
		if _, err := OpenWith(OpenOptions{Embedder: emb}, a, b); !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "lexical") {
			t.Fatalf("one shard with lexical windows, one without: %v", err)
		}
	})
}

// TestLexicalHostileDocuments builds documents of only stop words, a 5 MB
// run of letters and words of 1,000 characters: each is indexed (the first
// two with no terms, the long run dropped, not kept as a 5 MB term).
func TestLexicalHostileDocuments(t *testing.T) {
	long := strings.Repeat("q", 1000)
	docs := []testDoc{
		{ID: "stop", Text: "the and of a to in is it"},
		{ID: "run", Text: strings.Repeat("x", 5<<20)},
		{ID: "long", Text: long + " " + long + " protein"},
		{ID: "plain", Text: "protein folding in cells"},
	}
	ix, _ := buildLexical(t, docs, DefaultLexical())
	sh := ix.shards[0]
	wantLen := map[string]int{"stop": 0, "run": 0, "long": 3, "plain": 3}
	for i, id := range sh.ids {
		if got := sh.docLex().DocLen(i); got != wantLen[id] {
			t.Errorf("document %s: %d terms, want %d", id, got, wantLen[id])
		}
	}
	if sh.docLex().DF(long) != 1 {
		t.Errorf("the 1,000-character word is in %d documents, want 1", sh.docLex().DF(long))
	}
}

// lexicalQueries are queries made of the docs' titles.
func lexicalQueries(docs []testDoc, n int) []string {
	var qs []string
	for _, d := range docs[:n] {
		qs = append(qs, d.Title+" "+strings.Join(strings.Fields(d.Text)[:3], " "))
	}
	return qs
}

// TestLexicalChannelSearch checks that --fusion bm25-w32 ranks the chunks
// lexical.Search ranks in that window, all of them scored and put in the
// canonical order (score, document, byte start) here, and that the fused
// documents are those chunks' documents by their best chunk.
func TestLexicalChannelSearch(t *testing.T) {
	docs := scifactDocs(t, 80)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	queries := lexicalQueries(docs, 12)
	const channelK = 20
	ch, err := searchChunks(context.Background(), ix, queries, channelK)
	if err != nil {
		t.Fatal(err)
	}
	ci := ix.Layout().Index("bm25-w32")
	wi := ix.Layout().Index("w32")
	if ci < 0 || ch.Layout[ci].Kind != Lexical {
		t.Fatalf("layout %s has no lexical w32", ix.Layout())
	}
	sh := ix.shards[0]
	w := sh.windows()[wi]
	for q, text := range queries {
		terms := lexical.English.Terms(text)
		all, err := w.lex.Search([][]string{terms}, w.lex.Docs(), lexical.DefaultBM25, nil)
		if err != nil {
			t.Fatal(err)
		}
		var want []channel.Hit
		for j, r := range all.Rows {
			if r >= 0 {
				want = append(want, channel.Hit{Doc: sh.gidx[w.chunks.Doc[r]], Score: all.Scores[j], Start: w.chunks.ByteStart[r], End: w.chunks.ByteEnd[r]})
			}
		}
		sortCanonical(want)
		if len(want) == 0 {
			t.Fatalf("query %d matches no chunk", q)
		}
		for len(want) < channelK {
			want = append(want, channel.Hit{Doc: -1})
		}
		for r := range channelK {
			i := q*channelK + r
			got := channel.Hit{Doc: ch.Hits[ci].Docs[i], Score: ch.Hits[ci].Scores[i], Start: ch.Start[ci][i], End: ch.End[ci][i]}
			if got != want[r] {
				t.Fatalf("query %d rank %d: %+v, want %+v", q, r, got, want[r])
			}
		}
	}
	hits, err := ix.Search(context.Background(), queries, SearchOptions{Fusion: mustFusion(t, "bm25-w32"), K: 5, ChannelK: channelK})
	if err != nil {
		t.Fatal(err)
	}
	for q := range queries {
		best := ch.Hits[ci].Docs[q*channelK]
		if len(hits[q]) == 0 || hits[q][0].Doc != int(best) {
			t.Fatalf("query %d: first document %v, the best chunk's is %d", q, hits[q], best)
		}
		ev := hits[q][0].Evidence[0]
		if ev.Channel.Kind != Lexical || ev.Channel.Name() != "bm25-w32" || ev.ChunkRank != 1 || ev.ChunkScore != ch.Hits[ci].Scores[q*channelK] {
			t.Errorf("query %d: evidence %+v", q, ev)
		}
		var text string
		for _, d := range docs {
			if d.ID == hits[q][0].DocID {
				text = (d.Title + " " + d.Text)[ev.Start:ev.End]
			}
		}
		chunkTerms := lexical.English.Terms(text)
		var matched []string
		for _, term := range lexical.English.Terms(queries[q]) {
			if slices.Contains(chunkTerms, term) && !slices.Contains(matched, term) {
				matched = append(matched, term)
			}
		}
		if len(matched) == 0 || !slices.Equal(ev.Terms, matched) {
			t.Errorf("query %d: evidence terms %q, the chunk holds %q of the query's", q, ev.Terms, matched)
		}
	}
	// The whole-document channel's evidence spans the document's text up to
	// the end of its last token (the text has no trailing white space).
	hits, err = ix.Search(context.Background(), queries, SearchOptions{Fusion: mustFusion(t, "bm25-doc"), K: 5, ChannelK: channelK})
	if err != nil {
		t.Fatal(err)
	}
	for q := range queries {
		for _, h := range hits[q] {
			d := docs[slices.IndexFunc(docs, func(d testDoc) bool { return d.ID == h.DocID })]
			full := strings.TrimRightFunc(d.Title+" "+d.Text, unicode.IsSpace)
			if ev := h.Evidence[0]; ev.Channel.Name() != "bm25-doc" || ev.Start != 0 || ev.End != int64(len(full)) {
				t.Errorf("query %d, document %s: bm25-doc evidence %+v, want the span 0, %d", q, h.DocID, ev, len(full))
			}
		}
	}
}

func sortCanonical(hs []channel.Hit) {
	slices.SortFunc(hs, channel.Compare)
}

// TestLexicalShardsSearchLikeOneIndex checks that lexical channels, alone
// and fused with the dense windows, rank three shards exactly as one index:
// the same documents, scores and evidence.
func TestLexicalShardsSearchLikeOneIndex(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 300)
	// Repeated texts make ties across shards, which the canonical order breaks.
	for i := 0; i < 30; i += 3 {
		docs[i+150].Title, docs[i+150].Text = docs[i].Title, docs[i].Text
	}
	path := writeJSONL(t, docs)
	ctx := context.Background()
	one, err := Build(ctx, openCorpus(t, path, corpus.Options{BlockLines: 40}), Config{Embedder: emb, Windows: testWindows, Channels: withLexical(DefaultLexical())})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	dirs := buildShards(t, path, t.TempDir(), 3, 40, Config{Embedder: emb, Windows: testWindows, Channels: withLexical(DefaultLexical())})
	sharded, err := OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	queries := lexicalQueries(docs, 40)
	for _, fusion := range []string{"bm25-w16", "bm25-w64", "bm25-doc", "rrf:windows=lexical", "rrf:windows=all", "combsum:windows=all,norm=zscore"} {
		sameSearch(t, one, sharded, queries, fusion)
	}
}

// TestLexicalFusionRefused checks the plain refusals: a lexical fusion of
// an index without lexical windows, and of one analysed by an analyzer of
// another version (whose dense windows still search); and that a query no
// chunk matches gets no lexical hits and no error.
func TestLexicalFusionRefused(t *testing.T) {
	docs := scifactDocs(t, 30)
	ctx := context.Background()
	emb := testEmbedder(t)
	_, plain := buildLexical(t, docs, nil)
	old, err := OpenWith(OpenOptions{Embedder: emb}, plain)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for _, f := range []string{"bm25-w16", "rrf:windows=all", "rrf:windows=lexical", "rrf:windows=16+bm25-doc"} {
		_, err := old.Search(ctx, []string{"protein"}, SearchOptions{Fusion: mustFusion(t, f)})
		if !errors.Is(err, ErrNoLexical) || !strings.Contains(err.Error(), "index "+plain+" has no lexical windows") {
			t.Errorf("%s on an index without lexical windows: %v", f, err)
		}
	}
	if _, err := old.Search(ctx, []string{"protein"}, SearchOptions{Fusion: mustFusion(t, "rrf:windows=dense")}); err != nil {
		t.Errorf("a dense fusion of an index without lexical windows: %v", err)
	}

	ix, dir := buildLexical(t, docs, DefaultLexical())
	hits, err := ix.Search(ctx, []string{"zzyzx qqxq", "the of"}, SearchOptions{Fusion: mustFusion(t, "rrf:windows=lexical")})
	if err != nil || len(hits[0]) != 0 || len(hits[1]) != 0 {
		t.Errorf("queries matching no term: %v, %v", hits, err)
	}
	editManifest(t, dir, func(m map[string]any) {
		m["lexical"].(map[string]any)["analyzer"].(map[string]any)["version"] = "0 other"
	})
	other, err := OpenWith(OpenOptions{Embedder: emb}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Search(ctx, []string{"protein"}, SearchOptions{Fusion: mustFusion(t, "bm25-doc")}); !errors.Is(err, lexical.ErrAnalyzer) {
		t.Errorf("another analyzer version: %v", err)
	}
	if _, err := other.Search(ctx, []string{"protein"}, SearchOptions{Fusion: mustFusion(t, "rrf")}); err != nil {
		t.Errorf("dense search of an index whose analyzer is of another version: %v", err)
	}
	if _, err := searchChunks(ctx, other, []string{"protein"}, 10); err != nil {
		t.Errorf("chunk search of an index whose analyzer is of another version: %v", err)
	}
}

// TestLexicalTiesPastTheList checks the canonical order where every
// document ties: 240 copies of one text, ids in decreasing input order, so
// the rows a shard's list holds first are the last documents in id order;
// one index and three shards must both return the first ids.
func TestLexicalTiesPastTheList(t *testing.T) {
	var docs []testDoc
	for i := range 240 {
		docs = append(docs, testDoc{ID: fmt.Sprintf("d%03d", 240-i), Text: "protein folding in yeast cells"})
	}
	path := writeJSONL(t, docs)
	ctx := context.Background()
	emb := testEmbedder(t)
	var dirs []string
	for i := range 3 {
		dir := filepath.Join(t.TempDir(), "shard")
		ix, err := Build(ctx, openCorpus(t, path, corpus.Options{BlockLines: 20, Shard: corpus.Shard{I: i, N: 3}}),
			Config{Embedder: emb, Windows: testWindows, Out: dir, Shard: fmt.Sprintf("%d/3", i), Channels: withLexical(DefaultLexical())})
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		dirs = append(dirs, dir)
	}
	one, err := Build(ctx, openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Channels: withLexical(DefaultLexical())})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	sharded, err := OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer sharded.Close()
	want := []string{"d001", "d002", "d003", "d004", "d005"}
	for _, ix := range []*Index{one, sharded} {
		for _, f := range []string{"bm25-doc", "bm25-w16"} {
			hits, err := ix.Search(ctx, []string{"yeast protein"}, SearchOptions{Fusion: mustFusion(t, f), K: 5, ChannelK: 5})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits[0] {
				got = append(got, h.DocID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, %d shards: %v, want %v", f, len(ix.shards), got, want)
			}
		}
	}
}

// TestLexicalLateBuild checks that a late build, whose chunks travel to the
// add stage a document at a time, gives the same lexical files as an
// independent build of the same windows (the same chunk rows).
func TestLexicalLateBuild(t *testing.T) {
	emb, err := hashembed.NewHash(testTokenizer(t), 32, 48)
	if err != nil {
		t.Fatal(err)
	}
	path := writeJSONL(t, scifactDocs(t, 50))
	windows := []chunk.Window{{Size: 8, Stride: 4}, {Size: 20}, chunk.Full}
	var mans []Manifest
	for _, e := range []Embedding{Independent, Late} {
		ix, err := Build(context.Background(), openCorpus(t, path, corpus.Options{}),
			Config{Embedder: emb, Windows: windows, Embedding: e, BatchTokens: 300, Workers: 3, Channels: withLexical(DefaultLexical()),
				Out: filepath.Join(t.TempDir(), "idx")})
		if err != nil {
			t.Fatal(err)
		}
		mans = append(mans, ix.Manifest())
		ix.Close()
	}
	a, b := mans[0].Lexical, mans[1].Lexical
	for i := range a.Windows {
		if a.Windows[i].SHA256 != b.Windows[i].SHA256 || a.Windows[i].Rows == 0 {
			t.Errorf("window %d: lexical files of the independent and late builds differ: %+v, %+v", i, a.Windows[i], b.Windows[i])
		}
	}
	if a.Doc.SHA256 != b.Doc.SHA256 {
		t.Error("document lexical files differ")
	}
}

// TestBalanceKinds checks balance=kinds against the same rule with the
// weights it stands for written out: three dense windows and four lexical
// channels weigh 7/6 and 7/8 each.
func TestBalanceKinds(t *testing.T) {
	docs := scifactDocs(t, 60)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	queries := lexicalQueries(docs, 8)
	d, l := strconv.FormatFloat(7.0/6, 'g', -1, 64), strconv.FormatFloat(7.0/8, 'g', -1, 64)
	explicit := "windows=all,weights=16:" + d + "/32:" + d + "/64:" + d + "/bm25-16:" + l + "/bm25-32:" + l + "/bm25-64:" + l + "/bm25-doc:" + l
	for _, rule := range []string{"rrf:c=1", "combsum:norm=zscore"} {
		got, err := ix.Search(context.Background(), queries, SearchOptions{Fusion: mustFusion(t, rule+",windows=all,balance=kinds"), K: 10})
		if err != nil {
			t.Fatal(err)
		}
		want, err := ix.Search(context.Background(), queries, SearchOptions{Fusion: mustFusion(t, rule+","+explicit), K: 10})
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := ix.Search(context.Background(), queries, SearchOptions{Fusion: mustFusion(t, rule+",windows=all"), K: 10})
		differs := false
		for q := range queries {
			for r := range want[q] {
				if got[q][r].Doc != want[q][r].Doc || math.Abs(got[q][r].Score-want[q][r].Score) > 1e-12*math.Abs(want[q][r].Score) {
					t.Fatalf("%s query %d rank %d: %+v, want %+v", rule, q, r, got[q][r], want[q][r])
				}
				differs = differs || plain[q][r].Score != got[q][r].Score
			}
		}
		if !differs {
			t.Errorf("%s: balance=kinds scores as the unweighted rule", rule)
		}
	}
}

// TestKindWeights checks weights=lexical:W against the same rule with every
// lexical channel weighed W by name, and that a channel named keeps its own
// weight beside its kind's.
func TestKindWeights(t *testing.T) {
	docs := scifactDocs(t, 60)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	queries := lexicalQueries(docs, 8)
	for _, tc := range []struct{ kind, explicit string }{
		{"weights=lexical:1.5", "weights=bm25-16:1.5/bm25-32:1.5/bm25-64:1.5/bm25-doc:1.5"},
		{"weights=lexical:2/bm25-doc:0.5/16:3", "weights=16:3/bm25-16:2/bm25-32:2/bm25-64:2/bm25-doc:0.5"},
		{"weights=dense:0.5,adapt=kind-top:1", "weights=16:0.5/32:0.5/64:0.5,adapt=kind-top:1"},
	} {
		for _, rule := range []string{"rrf:c=1", "combsum:norm=zscore"} {
			search := func(params string) [][]Hit {
				r, err := ix.Search(context.Background(), queries, SearchOptions{Fusion: mustFusion(t, rule+",windows=all,"+params), K: 10})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			got, want, plain := search(tc.kind), search(tc.explicit), search("weights=16:1")
			differs := false
			for q := range queries {
				for r := range want[q] {
					if got[q][r].Doc != want[q][r].Doc || math.Abs(got[q][r].Score-want[q][r].Score) > 1e-12*math.Abs(want[q][r].Score) {
						t.Fatalf("%s,%s query %d rank %d: %+v, want %+v", rule, tc.kind, q, r, got[q][r], want[q][r])
					}
					differs = differs || plain[q][r].Score != got[q][r].Score
				}
			}
			if !differs {
				t.Errorf("%s,%s scores as the unweighted rule", rule, tc.kind)
			}
		}
	}
}

// sameSearch fails unless the sharded index ranks every query as the one
// index does with fusion (and finds something for each).
func sameSearch(t *testing.T, one, sharded *Index, queries []string, fusion string) {
	t.Helper()
	f := mustFusion(t, fusion)
	a, err := one.Search(context.Background(), queries, SearchOptions{Fusion: f, K: 20, ChannelK: 30})
	if err != nil {
		t.Fatal(err)
	}
	b, err := sharded.Search(context.Background(), queries, SearchOptions{Fusion: f, K: 20, ChannelK: 30})
	if err != nil {
		t.Fatal(err)
	}
	for q := range a {
		if len(a[q]) == 0 || !sameRanking(a[q], b[q]) {
			t.Errorf("%s query %d: sharded %v, one index %v", fusion, q, ids(b[q]), ids(a[q]))
		}
	}
}

// TestAdaptAcrossKinds checks the kind and consensus weightings end to end:
// each window of a kind gets its kind's weight (a rule with those weights
// given per query ranks the same), a kind weighting over one kind is the
// unweighted rule, and the consensus weighting is the rule with the
// consensus weights as static weights.
func TestAdaptAcrossKinds(t *testing.T) {
	docs := scifactDocs(t, 60)
	ix, _ := buildLexical(t, docs, DefaultLexical())
	ctx := context.Background()
	ch, err := searchChunks(ctx, ix, lexicalQueries(docs, 8), 30)
	if err != nil {
		t.Fatal(err)
	}
	fuseWith := func(f fusion.Fusion, qw, w []float64) *fuse.Ranking {
		t.Helper()
		sel, err := f.Select(ch.Layout)
		if err != nil {
			t.Fatal(err)
		}
		hits := make([]fuse.Hits, len(sel))
		for i, wi := range sel {
			hits[i] = ch.Hits[wi]
		}
		rk, err := fuse.Fuse(f.Method, hits, ix.NumDocs(), fuse.Options{K: 10, Norm: f.Norm, QueryWeights: qw, Weights: w})
		if err != nil {
			t.Fatal(err)
		}
		return rk
	}
	lists := func(f fusion.Fusion) ([]fuse.Hits, []int) {
		sel, _ := f.Select(ch.Layout)
		hits := make([]fuse.Hits, len(sel))
		kind := make([]int, len(sel))
		for i, wi := range sel {
			hits[i] = ch.Hits[wi]
			if ch.Layout[wi].Kind != Dense {
				kind[i] = 1
			}
		}
		return hits, kind
	}
	same := func(name string, a, b *fuse.Ranking) {
		t.Helper()
		for q := range a.NQ {
			da, sa := a.Query(q)
			db, sb := b.Query(q)
			if !slices.Equal(da, db) || !slices.Equal(sa, sb) {
				t.Fatalf("%s query %d: %v %v, want %v %v", name, q, da, sa, db, sb)
			}
		}
	}
	f := mustFusion(t, "combsum:norm=minmax,windows=all,adapt=kind-peak:0.2")
	_, got, err := fusion.Fuse(f, &ch.Lists, ix.NumDocs(), 10)
	if err != nil {
		t.Fatal(err)
	}
	hits, kind := lists(f)
	feats, _ := fuse.KindFeatures(hits, kind, 2)
	kw, _ := fuse.KindWeights(feats, 2, fuse.KindPeak, 0.2)
	qw := make([]float64, 0, ch.NQ*len(kind))
	for q := range ch.NQ {
		for _, k := range kind {
			qw = append(qw, kw[q*2+k])
		}
	}
	same("kind-peak", got, fuseWith(f, qw, nil))
	if slices.Equal(kw, slices.Repeat([]float64{1}, len(kw))) {
		t.Error("kind-peak weighs both kinds 1 for every query")
	}

	one := mustFusion(t, "combsum:norm=minmax,windows=lexical,adapt=kind-top:0.1")
	_, got, _ = fusion.Fuse(one, &ch.Lists, ix.NumDocs(), 10)
	same("one kind", got, fuseWith(one, nil, nil))

	c := mustFusion(t, "combsum:norm=minmax,windows=all,adapt=consensus:2")
	_, got, _ = fusion.Fuse(c, &ch.Lists, ix.NumDocs(), 10)
	hits, _ = lists(c)
	cw, _ := fuse.ConsensusWeights(hits, ix.NumDocs(), 2)
	same("consensus", got, fuseWith(c, nil, cw))
}
