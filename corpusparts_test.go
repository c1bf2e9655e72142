package msrag

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
)

// buildPart builds shard i/n of the corpus at path (JSONL in blocks of 10
// lines, or a directory), lexical only, into out.
func buildPart(tb *testing.T, path, out string, i, n int) string {
	tb.Helper()
	ix, err := Build(context.Background(), openCorpus(tb, path, corpus.Options{BlockLines: 10, Shard: corpus.Shard{I: i, N: n}}),
		Config{Tokenizer: testWindowTokenizer(tb), Windows: chunk.Sizes(16, 32), Out: out, Shard: fmt.Sprintf("%d/%d", i, n)})
	if err != nil {
		tb.Fatal(err)
	}
	ix.Close()
	return out
}

// writeCorpus writes docs as the JSONL file name in dir.
func writeCorpus(tb testing.TB, dir, name string, docs []testDoc) string {
	tb.Helper()
	data, err := os.ReadFile(writeJSONL(tb, docs))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestShardsOfAnotherCorpusUnmarked checks that shards whose manifests
// predate the record of shared files are still told apart when two of them
// read the corpus file by the same path, and that the shards of a
// directory, each of which reads its own files, are searched together.
func TestShardsOfAnotherCorpusUnmarked(t *testing.T) {
	docs := scifactDocs(t, 90)
	data := t.TempDir()
	main := writeCorpus(t, data, "corpus.jsonl", docs[:60])
	other := writeCorpus(t, data, "other.jsonl", docs[30:90])
	base := t.TempDir()
	dirs := []string{buildPart(t, main, filepath.Join(base, "0"), 0, 3), buildPart(t, other, filepath.Join(base, "1"), 1, 3), buildPart(t, main, filepath.Join(base, "2"), 2, 3)}
	shared := regexp.MustCompile(`,\s*"shared": true`)
	for _, d := range dirs {
		p := filepath.Join(d, "manifest.json")
		m, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !shared.Match(m) {
			t.Fatalf("%s records no shared file", p)
		}
		os.WriteFile(p, shared.ReplaceAll(m, nil), 0o644)
	}
	if _, err := OpenWith(OpenOptions{}, dirs...); !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), "other.jsonl") {
		t.Errorf("unmarked shards of two files: %v", err)
	}
	// A directory of files, in 3 shards.
	tree := t.TempDir()
	for i, d := range docs[:12] {
		if err := os.WriteFile(filepath.Join(tree, fmt.Sprintf("%02d.txt", i)), []byte(d.Text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var parts []string
	for i := range 3 {
		parts = append(parts, buildPart(t, tree, filepath.Join(base, fmt.Sprint("dir-", i)), i, 3))
	}
	ix, err := OpenWith(OpenOptions{}, parts...)
	if err != nil {
		t.Fatalf("the shards of a directory: %v", err)
	}
	ix.Close()
}
