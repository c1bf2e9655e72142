package msrag

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embedders"
	"github.com/msrag/msrag/onnx"
)

// TestOpenReopensTheRecordedModel builds an index with the hash embedder
// opened by its name's kind, then opens it without an embedder: from the
// origin it recorded (format 3), and, with the origin taken out as format 2
// wrote it, by the model's name. Both search as the embedder that built it.
func TestOpenReopensTheRecordedModel(t *testing.T) {
	if _, err := onnx.ResolveModel(embedders.HashTokenizerModel); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	emb, err := embedders.OpenHash()
	if err != nil {
		t.Fatal(err)
	}
	docs := scifactDocs(t, 20)
	dir := filepath.Join(t.TempDir(), "idx")
	ctx := context.Background()
	ix, err := Build(ctx, openCorpus(t, writeJSONL(t, docs), corpus.Options{}), Config{Embedder: emb, Out: dir, Windows: testWindows})
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{docs[2].Title, docs[7].Text}
	opts := SearchOptions{K: 5, Fusion: mustFusion(t, "rrf")}
	want, err := ix.Search(ctx, queries, opts)
	ix.Close()
	if err != nil {
		t.Fatal(err)
	}
	man, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o := man.Model.Origin; man.FormatVersion != 3 || o.Kind != "hash" || o.Params != `{"dims":64,"max_tokens":512}` || o.Access != "" {
		t.Errorf("manifest format %d, origin %+v", man.FormatVersion, o)
	}
	check := func(what string) {
		t.Helper()
		ix, err := Open(dir)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer ix.Close()
		got, err := ix.Search(ctx, queries, opts)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: hits %v (%v), want %v", what, got, err, want)
		}
	}
	check("from the origin")

	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m["model"].(map[string]any), "origin")
	m["format_version"] = 2
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	check("format 2, by name")
}
