package msrag_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/scatter"
)

// TestManifestsReadOncePerProcess checks that a search of shards reads and
// checks each shard's manifest once: one process opening them all, and
// every task of every phase of a scatter-gather search, each of which would
// be a process of its own, reads as many manifests as there are shards, the
// shard it opens included.
func TestManifestsReadOncePerProcess(t *testing.T) {
	dirs, texts := msrag.BuildLexicalShards(t, 60, 3)
	qs := scatter.QuerySet{Texts: texts}
	for i := range texts {
		qs.IDs = append(qs.IDs, fmt.Sprint("q", i))
	}
	o := scatter.Options{Work: t.TempDir(), ChannelK: 10}
	ctx := context.Background()
	reads := msrag.CountManifestReads(t)
	check := func(what string, run func() error) {
		t.Helper()
		before := reads()
		if err := run(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := reads() - before; got != int64(len(dirs)) {
			t.Errorf("%s read %d manifests of %d shards", what, got, len(dirs))
		}
	}
	check("one process", func() error {
		ix, err := msrag.OpenWith(msrag.OpenOptions{}, dirs...)
		if err == nil {
			ix.Close()
		}
		return err
	})
	for i := range dirs {
		check(fmt.Sprint("statistics task ", i), func() error { return scatter.Statistics(ctx, dirs, i, qs, o) })
	}
	for i := range dirs {
		check(fmt.Sprint("scatter task ", i), func() error { return scatter.Scatter(ctx, dirs, i, qs, o) })
	}
	check("gather", func() error {
		g, err := scatter.OpenGather(dirs, qs, o)
		if err == nil {
			g.Close()
		}
		return err
	})
}
