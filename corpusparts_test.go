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

// searchedTogether is every way shards are searched together: one process,
// and each phase of a scatter-gather search.
func searchedTogether(tb testing.TB, dirs []string, qs QuerySet) map[string]error {
	tb.Helper()
	ctx := context.Background()
	o := ScatterOptions{Work: tb.TempDir(), WindowK: 10, Kinds: []ChannelKind{Lexical}}
	out := map[string]error{}
	ix, err := OpenWith(OpenOptions{}, dirs...)
	if err == nil {
		ix.Close()
	}
	out["one process"] = err
	out["statistics"] = Statistics(ctx, dirs, 0, qs, o)
	out["scatter"] = Scatter(ctx, dirs, 0, qs, o)
	g, err := OpenGather(dirs, qs, o)
	if err == nil {
		g.Close()
	}
	out["gather"] = err
	return out
}

// TestShardsOfAnotherCorpus checks that shards searched together must be
// parts of one corpus: a shard built, with the same windows and its own
// place, from another file (of another name, or of the same name and other
// content) is refused by one-process search and by every phase, naming
// both shards and the file; so are shards of builds of another n or of the
// same place. Shards of one JSONL file or of one directory are searched.
func TestShardsOfAnotherCorpus(t *testing.T) {
	docs := scifactDocs(t, 90)
	data := t.TempDir()
	main := writeCorpus(t, data, "corpus.jsonl", docs[:60])
	other := writeCorpus(t, data, "other.jsonl", docs[30:90])
	sameName := writeCorpus(t, t.TempDir(), "corpus.jsonl", docs[30:90])
	qs := querySet(lexicalQueries(docs, 3))
	base := t.TempDir()
	part := func(path string, i, n int) string {
		return buildPart(t, path, filepath.Join(base, fmt.Sprintf("%s-%d-of-%d", strings.ReplaceAll(path, string(filepath.Separator), "_"), i, n)), i, n)
	}
	good := []string{part(main, 0, 3), part(main, 1, 3), part(main, 2, 3)}
	for how, err := range searchedTogether(t, good, qs) {
		if err != nil && (how == "one process" || how == "statistics") {
			t.Fatalf("%s of the shards of one file: %v", how, err)
		}
	}
	for _, tc := range []struct {
		name string
		dirs []string
		want []string
	}{
		{"another file, shard 1/3", []string{good[0], part(other, 1, 3), good[2]}, []string{"not parts of one corpus", "shard 0/3 read corpus.jsonl", "shard 1/3 did not", "other.jsonl"}},
		{"another file, shard 1/2", []string{part(main, 0, 2), part(other, 1, 2)}, []string{"not parts of one corpus", "shard 0/2 read corpus.jsonl", "other.jsonl"}},
		{"the same name, other content", []string{good[0], part(sameName, 1, 3), good[2]}, []string{"corpus.jsonl is", "in shard 0/3 and", "in shard 1/3"}},
		{"another n", []string{good[0], part(main, 1, 2)}, []string{"different sharded builds", "shard 0/3, shard 1/2"}},
		{"one place twice", []string{good[0], good[1], good[1]}, []string{"both hold shard 1/3"}},
	} {
		for how, err := range searchedTogether(t, tc.dirs, qs) {
			if !errors.Is(err, ErrIndexMismatch) {
				t.Errorf("%s, %s: %v, want an index mismatch", tc.name, how, err)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: %v, want %q", tc.name, how, err, w)
				}
			}
		}
	}
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
