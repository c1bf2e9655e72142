package scatter_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/scatter"
)

// searchedTogether is every way shards are searched together: one process,
// and each phase of a scatter-gather search.
func searchedTogether(tb testing.TB, dirs []string, qs scatter.QuerySet) map[string]error {
	tb.Helper()
	ctx := context.Background()
	o := scatter.Options{Work: tb.TempDir(), ChannelK: 10, Kinds: []msrag.ChannelKind{bm25.Kind}}
	out := map[string]error{}
	ix, err := msrag.OpenWith(msrag.OpenOptions{}, dirs...)
	if err == nil {
		ix.Close()
	}
	out["one process"] = err
	out["statistics"] = scatter.Statistics(ctx, dirs, 0, qs, o)
	out["scatter"] = scatter.Scatter(ctx, dirs, 0, qs, o)
	g, err := scatter.OpenGather(dirs, qs, o)
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
			if !errors.Is(err, msrag.ErrIndexMismatch) {
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
