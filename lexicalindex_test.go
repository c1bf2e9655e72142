package msrag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/lexical"
)

// buildLexical builds docs with lexical windows into a new directory.
func buildLexical(t *testing.T, docs []testDoc, lex *LexicalConfig) (*Index, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "idx")
	ix, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs), corpus.Options{}),
		Config{Embedder: testEmbedder(t), Windows: testWindows, Out: out, Lexical: lex})
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
	for wi, w := range sh.windows {
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
	if !bytes.Equal(lexicalBytes(t, sh.docLex), lexicalBytes(t, want.Build())) || l.Doc.Rows != int64(len(docs)) {
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
		if ix.lex == nil || !errors.Is(ix.lex.err, lexical.ErrAnalyzer) || !errors.Is(ix.lex.err, ErrIndexMismatch) {
			t.Fatalf("analyzer of another version: %v", ix.lex)
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
		if got := sh.docLex.DocLen(i); got != wantLen[id] {
			t.Errorf("document %s: %d terms, want %d", id, got, wantLen[id])
		}
	}
	if sh.docLex.DF(long) != 1 {
		t.Errorf("the 1,000-character word is in %d documents, want 1", sh.docLex.DF(long))
	}
}
