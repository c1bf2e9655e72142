package msrag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/store"
)

// TestShardsOfDifferentBatchingRefused: shards whose manifests record
// different batchings are not searched together; an absent record is the
// padded batching every earlier build used.
func TestShardsOfDifferentBatchingRefused(t *testing.T) {
	emb := testEmbedder(t)
	path := writeJSONL(t, scifactDocs(t, 40))
	base := t.TempDir()
	var dirs []string
	for i := range 2 {
		dir := filepath.Join(base, fmt.Sprint(i))
		ix, err := Build(context.Background(), openCorpus(t, path, corpus.Options{BlockLines: 10, Shard: corpus.Shard{I: i, N: 2}}),
			Config{Embedder: emb, Windows: testWindows, Out: dir, Shard: fmt.Sprintf("%d/2", i)})
		if err != nil {
			t.Fatal(err)
		}
		if b := ix.Manifest().Batching; b != "" {
			t.Fatalf("the hash test embedder has no batching, manifest says %q", b)
		}
		ix.Close()
		dirs = append(dirs, dir)
	}
	setBatching := func(dir, b string) {
		t.Helper()
		p := filepath.Join(dir, store.ManifestName)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(data), `"embedding":`, fmt.Sprintf(`"batching": %q, "embedding":`, b), 1)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setBatching(dirs[1], "padded")
	ix, err := OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if err != nil {
		t.Fatalf("a shard without a batching record and a padded one: %v", err)
	}
	if id, err := IdentityOf(ix.man); err != nil || id.Batching != "padded" {
		t.Errorf("batching %q (%v), want padded", id.Batching, err)
	}
	ix.Close()
	setBatching(dirs[0], "single")
	_, err = OpenWith(OpenOptions{Embedder: emb}, dirs...)
	if !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "different batching (single, padded)") {
		t.Fatalf("single and padded shards together: %v", err)
	}
}
