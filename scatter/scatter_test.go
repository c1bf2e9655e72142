package scatter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/scatterfile"
	"github.com/msrag/msrag/internal/testkind"
	"github.com/msrag/msrag/scatter"
)

// scatterShards builds n shards of docs with dense, lexical and overlap
// channels and returns their directories.
func scatterShards(t *testing.T, docs []testDoc, n int) []string {
	t.Helper()
	return buildShards(t, writeJSONL(t, docs), t.TempDir(), n, 30, msrag.Config{Embedder: testEmbedder(t), Windows: testWindows,
		Channels: withLexical(defaultLexical(), testkind.Kind.Params())})
}

// runPhases runs every task of the statistics and scatter phases in
// this process.
func runPhases(t *testing.T, dirs []string, qs scatter.QuerySet, o scatter.Options) {
	t.Helper()
	ctx := context.Background()
	for i := range dirs {
		if err := scatter.Statistics(ctx, dirs, i, qs, o); err != nil {
			t.Fatal(err)
		}
	}
	for i := range dirs {
		if err := scatter.Scatter(ctx, dirs, i, qs, o); err != nil {
			t.Fatal(err)
		}
	}
}

// gatherHits gathers the search and fuses it with fusion.
func gatherHits(t *testing.T, dirs []string, qs scatter.QuerySet, o scatter.Options, rule string) ([][]msrag.Hit, error) {
	t.Helper()
	g, err := scatter.OpenGather(dirs, qs, o)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	out := make([][]msrag.Hit, len(qs.Texts))
	opts := msrag.SearchOptions{Fusion: mustFusion(t, rule), K: 20, ChannelK: o.ChannelK}
	_, err = g.SearchBatches(context.Background(), qs.Texts, msrag.BatchOptions{}, func(lo int, ch *msrag.ChunkHits) error {
		hits, err := g.Fuse(ch, opts)
		copy(out[lo:], hits)
		return err
	})
	return out, err
}

// tiesAtK reports whether, for some query, the k-th and the (k+1)-th rows
// of channel ch in the shard in dir score alike: a tie at the boundary of
// the shard's list, which an exact merge must break as one index would.
func tiesAtK(t *testing.T, dir string, qs scatter.QuerySet, ch string, k int) bool {
	t.Helper()
	ix, err := msrag.OpenWith(msrag.OpenOptions{Kinds: []msrag.ChannelKind{testkind.Kind}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var h *msrag.ChunkHits
	_, err = ix.SearchBatches(context.Background(), qs.Texts, msrag.BatchOptions{ChannelK: k + 1}, func(_ int, ch *msrag.ChunkHits) error {
		h = ch
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := h.Layout.Index(ch)
	for q := range h.NQ {
		hits := h.Hits[c]
		if i := q*hits.K + k; hits.Docs[i] >= 0 && hits.Scores[i] == hits.Scores[i-1] {
			return true
		}
	}
	return false
}

func querySet(texts []string) scatter.QuerySet {
	qs := scatter.QuerySet{Texts: texts}
	for i := range texts {
		qs.IDs = append(qs.IDs, fmt.Sprintf("q%d", i))
	}
	return qs
}

// TestScatterGatherIsOneProcess checks that the three phases, each task on
// its own, rank every fusion exactly as one process searching the shards
// together: documents, scores and evidence (lexical terms included), with
// blocks of queries smaller than the set and ties (repeated texts, overlap
// scores) at the shards' k-th places.
func TestScatterGatherIsOneProcess(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 200)
	for i := 0; i < 30; i += 3 {
		docs[i+100].Title, docs[i+100].Text = docs[i].Title, docs[i].Text
	}
	dirs := scatterShards(t, docs, 3)
	one, err := msrag.OpenWith(msrag.OpenOptions{Embedder: emb}, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	qs := querySet(lexicalQueries(docs, 25))
	o := scatter.Options{Work: t.TempDir(), ChannelK: 30, Batch: 7, Terms: true, Open: msrag.OpenOptions{Embedder: emb}}
	if !tiesAtK(t, dirs[0], qs, "ovl-w16", o.ChannelK) {
		t.Fatal("no query of shard 0 has a tie at the k-th place of ovl-w16: the case is not the one built")
	}
	runPhases(t, dirs, qs, o)
	for _, rule := range []string{"rrf", "w32", "bm25-w16", "bm25-doc", "rrf:windows=lexical", "ovl-w64", fusion.DefaultHybrid, "rrf:windows=all"} {
		want, err := one.Search(context.Background(), qs.Texts, msrag.SearchOptions{Fusion: mustFusion(t, rule), K: 20, ChannelK: 30})
		if err != nil {
			t.Fatal(err)
		}
		got, err := gatherHits(t, dirs, qs, o, rule)
		if err != nil {
			t.Fatal(err)
		}
		for q := range want {
			if len(want[q]) == 0 || !sameRanking(want[q], got[q]) {
				t.Fatalf("%s query %d: gathered %v, one process %v", rule, q, ids(got[q]), ids(want[q]))
			}
		}
	}
}

// TestScatterGatherFaults checks that each fault is an error naming the
// file, found before anything is fused: a lists file missing, cut short,
// bit-flipped, of other queries; statistics of another set of shards; and
// that a rerun of the one failed task mends the search.
func TestScatterGatherFaults(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 90)
	dirs := scatterShards(t, docs, 3)
	qs := querySet(lexicalQueries(docs, 8))
	o := scatter.Options{Work: t.TempDir(), ChannelK: 20, Batch: 5, Open: msrag.OpenOptions{Embedder: emb}}
	runPhases(t, dirs, qs, o)
	lists := scatterfile.Path(o.Work, scatterfile.PhaseLists, 1, ".arrow")
	good, err := os.ReadFile(lists)
	if err != nil {
		t.Fatal(err)
	}
	gather := func() error { _, err := gatherHits(t, dirs, qs, o, "rrf:windows=all"); return err }
	if err := gather(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		break_ func()
		want   string
	}{
		{"missing", func() { os.Remove(lists) }, "00001.arrow"},
		{"cut short", func() { os.WriteFile(lists, good[:len(good)/2], 0o644) }, "cut short"},
		{"bit flipped", func() { b := append([]byte(nil), good...); b[len(b)/3] ^= 1; os.WriteFile(lists, b, 0o644) }, "damaged"},
		{"record missing", func() { os.Remove(strings.TrimSuffix(lists, ".arrow") + ".json") }, "did not finish"},
	} {
		tc.break_()
		if err := gather(); !errors.Is(err, scatterfile.ErrBad) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		// Rerunning the one task mends it.
		if err := scatter.Scatter(context.Background(), dirs, 1, qs, o); err != nil {
			t.Fatalf("%s: rerun: %v", tc.name, err)
		}
		if err := gather(); err != nil {
			t.Fatalf("%s: after the rerun: %v", tc.name, err)
		}
	}
	// Other queries.
	other := querySet(lexicalQueries(docs, 9))
	if _, err := gatherHits(t, dirs, other, o, "rrf"); !errors.Is(err, scatterfile.ErrBad) || !strings.Contains(err.Error(), "another search") {
		t.Errorf("other queries: %v", err)
	}
	// scatter.Statistics of another set of shards: a scatter of shard 0 finds
	// statistics written by another index's shard 2.
	others := scatterShards(t, scifactDocs(t, 60), 3)
	wo := o
	wo.Work = t.TempDir()
	runPhases(t, others, qs, wo)
	stats2 := scatterfile.Path(o.Work, scatterfile.PhaseStats, 2, ".json")
	data, _ := os.ReadFile(scatterfile.Path(wo.Work, scatterfile.PhaseStats, 2, ".json"))
	os.WriteFile(stats2, data, 0o644)
	if err := scatter.Scatter(context.Background(), dirs, 0, qs, o); !errors.Is(err, scatterfile.ErrBad) || !strings.Contains(err.Error(), "another shard") {
		t.Errorf("statistics of another shard set: %v", err)
	}
	// A shard of other windows (or model, or analyzer) beside the others.
	path := writeJSONL(t, docs[:20])
	otherWin := filepath.Join(t.TempDir(), "w")
	ix, err := msrag.Build(context.Background(), openCorpus(t, path, corpus.Options{}), msrag.Config{Embedder: emb, Windows: chunk.Sizes(16, 48), Out: otherWin, Channels: withLexical(defaultLexical(), testkind.Kind.Params())})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if err := scatter.Scatter(context.Background(), []string{dirs[0], dirs[1], otherWin}, 0, qs, o); !errors.Is(err, msrag.ErrIndexMismatch) || !strings.Contains(err.Error(), "different windows") {
		t.Errorf("a shard of other windows: %v", err)
	}
	// A shard of another build in place of one.
	mixed := []string{dirs[0], dirs[1], others[1]}
	if err := scatter.Statistics(context.Background(), mixed, 0, qs, o); !errors.Is(err, msrag.ErrIndexMismatch) || !strings.Contains(err.Error(), "both hold shard 1/3") {
		t.Errorf("a statistics task over shards of two builds: %v", err)
	}
}

// changeDocs changes one byte of the statistics file in the stats
// directory of work that holds shard i's document count (the first digit
// of "Docs"), so that it stays valid JSON, and returns its path.
func changeDocs(tb testing.TB, work string, i int) string {
	tb.Helper()
	paths, _ := filepath.Glob(filepath.Join(work, "stats", fmt.Sprintf("%05d*", i)))
	docs := regexp.MustCompile(`"Docs": ?([0-9])`)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		m := docs.FindSubmatchIndex(data)
		if m == nil {
			continue
		}
		if data[m[2]] == '9' {
			data[m[2]] = '8'
		} else {
			data[m[2]] = '9'
		}
		if !json.Valid(data) {
			tb.Fatalf("%s is no longer JSON", p)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		return p
	}
	tb.Fatalf("no statistics file of shard %d in %s holds a document count", i, work)
	return ""
}

// TestScatterStatisticsChanged checks that a statistics file changed
// between the phases (one byte, still valid JSON) is an error naming the
// file in every scatter task, not a ranking by other statistics.
func TestScatterStatisticsChanged(t *testing.T) {
	docs := scifactDocs(t, 60)
	dirs := scatterShards(t, docs, 2)
	qs := querySet(lexicalQueries(docs, 5))
	o := scatter.Options{Work: t.TempDir(), ChannelK: 10, Kinds: []msrag.ChannelKind{bm25.Kind}}
	for i := range dirs {
		if err := scatter.Statistics(context.Background(), dirs, i, qs, o); err != nil {
			t.Fatal(err)
		}
	}
	path := changeDocs(t, o.Work, 0)
	for i := range dirs {
		err := scatter.Scatter(context.Background(), dirs, i, qs, o)
		if !errors.Is(err, scatterfile.ErrBad) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "sha256") {
			t.Fatalf("scatter %d after %s changed: %v", i, path, err)
		}
	}
	if _, err := os.Stat(scatterfile.Path(o.Work, scatterfile.PhaseLists, 0, ".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lists record was written: %v", err)
	}
	// The statistics task's rerun mends it.
	if err := scatter.Statistics(context.Background(), dirs, 0, qs, o); err != nil {
		t.Fatal(err)
	}
	if err := scatter.Scatter(context.Background(), dirs, 0, qs, o); err != nil {
		t.Fatalf("after the rerun: %v", err)
	}
	// A record whose shard's manifest is erased is of no known shard.
	rec := scatterfile.Path(o.Work, scatterfile.PhaseStats, 1, ".json")
	data, _ := os.ReadFile(rec)
	erased := regexp.MustCompile(`"manifest_sha256": "[0-9a-f]*",`).ReplaceAll(data, nil)
	if len(erased) == len(data) {
		t.Fatalf("%s records no manifest: %s", rec, data)
	}
	os.WriteFile(rec, erased, 0o644)
	if err := scatter.Scatter(context.Background(), dirs, 0, qs, o); !errors.Is(err, scatterfile.ErrBad) || !strings.Contains(err.Error(), "another shard") {
		t.Fatalf("a statistics record without its shard's manifest: %v", err)
	}
	// A record of format 1, whose statistics were unchecked.
	os.WriteFile(rec, regexp.MustCompile(`"format": [0-9]+`).ReplaceAll(data, []byte(`"format": 1`)), 0o644)
	if err := scatter.Scatter(context.Background(), dirs, 0, qs, o); !errors.Is(err, scatterfile.ErrBad) || !strings.Contains(err.Error(), "format 1, this msrag reads 2") {
		t.Fatalf("a statistics record of format 1: %v", err)
	}
}

// TestScatterRemovesLeftovers checks that what a task killed while
// writing leaves (its files' temporaries) is removed by the task's rerun,
// and every task's by the gather, and nothing else is.
func TestScatterRemovesLeftovers(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 60)
	dirs := scatterShards(t, docs, 2)
	qs := querySet(lexicalQueries(docs, 5))
	o := scatter.Options{Work: t.TempDir(), ChannelK: 10, Open: msrag.OpenOptions{Embedder: emb}}
	runPhases(t, dirs, qs, o)
	leave := func(phase string, i int, ext string) string {
		p := scatterfile.Path(o.Work, phase, i, ext)
		tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".tmp-123456")
		if err := os.WriteFile(tmp, []byte("part of a file"), 0o644); err != nil {
			t.Fatal(err)
		}
		return tmp
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	lists := []string{leave(scatterfile.PhaseLists, 1, ".arrow"), leave(scatterfile.PhaseLists, 1, ".json")}
	others := []string{leave(scatterfile.PhaseLists, 0, ".arrow"), leave(scatterfile.PhaseStats, 1, ".stats.json"), leave(scatterfile.PhaseQueries, 0, ".arrow")}
	if err := scatter.Scatter(context.Background(), dirs, 1, qs, o); err != nil {
		t.Fatal(err)
	}
	for _, p := range lists {
		if exists(p) {
			t.Errorf("the rerun of scatter task 1 left %s", p)
		}
	}
	for _, p := range others {
		if !exists(p) {
			t.Errorf("scatter task 1 removed %s, another task's", p)
		}
	}
	if _, err := gatherHits(t, dirs, qs, o, "rrf"); err != nil {
		t.Fatal(err)
	}
	for _, p := range others {
		if exists(p) {
			t.Errorf("the gather left %s", p)
		}
	}
}

// TestScatterWorkLink checks that a work directory given as a symbolic
// link to nothing is refused, naming the link and its target, and nothing
// is made there; a link to a directory is followed.
func TestScatterWorkLink(t *testing.T) {
	docs := scifactDocs(t, 30)
	dirs := scatterShards(t, docs, 2)
	qs := querySet(lexicalQueries(docs, 3))
	base := t.TempDir()
	target, link := filepath.Join(base, "scratch", "work"), filepath.Join(base, "work")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	o := scatter.Options{Work: link, ChannelK: 10, Kinds: []msrag.ChannelKind{bm25.Kind}}
	err := scatter.Statistics(context.Background(), dirs, 0, qs, o)
	if err == nil || !strings.Contains(err.Error(), "symbolic link to "+target) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a link to nothing: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "scratch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("something was made at the link's target: %v", err)
	}
	o.Work = filepath.Join(link, "sub") // a link to nothing above it
	if err := scatter.Statistics(context.Background(), dirs, 0, qs, o); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a link to nothing above the work directory: %v", err)
	}
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	o.Work = link
	if err := scatter.Statistics(context.Background(), dirs, 0, qs, o); err != nil {
		t.Fatalf("a link to a directory: %v", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	o.Work = filepath.Join(file, "work")
	if err := scatter.Statistics(context.Background(), dirs, 0, qs, o); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a work directory under a file: %v", err)
	}
}

// TestGatherChecksFusion checks that the gather, searched as an index is
// (msrag.Searcher), refuses before reading any list a fusion of a kind its
// scatter did not search, and serves one of the kinds it searched.
func TestGatherChecksFusion(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 60)
	dirs := scatterShards(t, docs, 2)
	qs := querySet(lexicalQueries(docs, 4))
	o := scatter.Options{Work: t.TempDir(), ChannelK: 10, Kinds: []msrag.ChannelKind{bm25.Kind}, Open: msrag.OpenOptions{Embedder: emb}}
	runPhases(t, dirs, qs, o)
	g, err := scatter.OpenGather(dirs, qs, o)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var s msrag.Searcher = g
	if err := s.CheckFusion(mustFusion(t, "rrf:windows=lexical")); err != nil {
		t.Errorf("a fusion of the kind searched: %v", err)
	}
	for _, f := range []string{"w32", fusion.DefaultHybrid} {
		err := s.CheckFusion(mustFusion(t, f))
		if err == nil || !strings.Contains(err.Error(), "did not search the dense channels") {
			t.Errorf("%s, of a kind the scatter did not search: %v", f, err)
		}
	}
}
