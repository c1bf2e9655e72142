package channel_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/msrag/msrag/channel"
)

// rows is a channel's rows for tests: each row's document, byte start and
// score for every query.
type rows struct {
	doc    []int32
	start  []int64
	scores [][]float32 // per query, per row
}

func (r *rows) Len() int                      { return len(r.doc) }
func (r *rows) Doc(row int32) int32           { return r.doc[row] }
func (r *rows) Span(row int32) (int64, int64) { return r.start[row], r.start[row] + 10 }
func (r *rows) hit(q int, row int32) channel.Hit {
	s, e := r.Span(row)
	return channel.Hit{Row: row, Doc: r.doc[row], Score: r.scores[q][row], Start: s, End: e}
}

// makeRows makes n rows over docs documents for nq queries, their scores
// drawn from levels values so that many tie.
func makeRows(rng *rand.Rand, nq, n, docs, levels int) *rows {
	r := &rows{doc: make([]int32, n), start: make([]int64, n), scores: make([][]float32, nq)}
	for i := range n {
		r.doc[i], r.start[i] = int32(rng.IntN(docs)), int64(i*7)
	}
	for q := range nq {
		r.scores[q] = make([]float32, n)
		for i := range n {
			r.scores[q][i] = float32(rng.IntN(levels)) / 4
		}
	}
	return r
}

// engine returns the n best rows of the subset by score, ties in a random
// order, as an engine that knows nothing of documents would; it counts its
// calls.
func engine(rng *rand.Rand, r *rows, subset []int32, calls *int) channel.SearchFunc {
	return func(qs []int, n int) ([]int32, []float32, error) {
		*calls++
		outR, outS := make([]int32, 0, len(qs)*n), make([]float32, 0, len(qs)*n)
		for _, q := range qs {
			order := slices.Clone(subset)
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			slices.SortStableFunc(order, func(a, b int32) int {
				sa, sb := r.scores[q][a], r.scores[q][b]
				switch {
				case sa > sb:
					return -1
				case sa < sb:
					return 1
				}
				return 0
			})
			for j := range n {
				if j < len(order) {
					outR, outS = append(outR, order[j]), append(outS, r.scores[q][order[j]])
				} else {
					outR, outS = append(outR, -1), append(outS, 0)
				}
			}
		}
		return outR, outS, nil
	}
}

// subsetRows maps the rows of a subset (its row i: the whole's subset[i])
// as the whole maps them.
type subsetRows struct {
	all    *rows
	subset []int32
}

func (s subsetRows) Len() int                      { return len(s.subset) }
func (s subsetRows) Doc(row int32) int32           { return s.all.Doc(s.subset[row]) }
func (s subsetRows) Span(row int32) (int64, int64) { return s.all.Span(s.subset[row]) }

// canonical is the canonical top k of query q over the rows of subset.
func canonical(r *rows, q int, subset []int32, k int) []channel.Hit {
	var all []channel.Hit
	for _, row := range subset {
		all = append(all, r.hit(q, row))
	}
	slices.SortFunc(all, channel.Compare)
	return all[:min(k, len(all))]
}

func listOf(h channel.Hits, q int) []channel.Hit {
	var out []channel.Hit
	for j := range h.K {
		x := h.At(q, j)
		if x.Row < 0 {
			break
		}
		x.Shard = 0
		out = append(out, x)
	}
	return out
}

// TestTopIsCanonical checks that Top returns the canonical top k whatever
// order the engine returns ties in, searching again when a tie at the k-th
// place runs past what it returned: 300 rows on 3 score levels put hundreds
// of ties across every k.
func TestTopIsCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ n, docs, levels, k int }{
		{300, 40, 3, 10}, {300, 300, 2, 50}, {60, 5, 60, 100}, {0, 1, 1, 5}, {500, 50, 1, 7},
	} {
		r := makeRows(rng, 4, tc.n, tc.docs, tc.levels)
		all := make([]int32, tc.n)
		for i := range all {
			all[i] = int32(i)
		}
		calls := 0
		h, err := channel.Top(context.Background(), 4, tc.k, r, engine(rng, r, all, &calls))
		if err != nil {
			t.Fatal(err)
		}
		for q := range 4 {
			if got, want := listOf(h, q), canonical(r, q, all, tc.k); !slices.Equal(got, want) {
				t.Fatalf("%+v query %d: %v\nwant %v", tc, q, got, want)
			}
		}
		if tc.levels < 4 && tc.n > tc.k+channel.TieMargin && calls < 2 {
			t.Errorf("%+v: %d engine calls; a tie past the first list needs another", tc, calls)
		}
	}
}

// TestTopBlocks checks that a batch searched in several blocks, some of
// whose queries are searched again for ties, gives what one block gives.
func TestTopBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const nq, n, k = 1300, 200, 10
	r := makeRows(rng, nq, n, 30, 3)
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	calls := 0
	one, err := channel.Top(context.Background(), nq, k, r, engine(rng, r, all, &calls))
	if err != nil {
		t.Fatal(err)
	}
	restore := channel.SetTopWork(n * 512)
	defer restore()
	blocks := 0
	split, err := channel.Top(context.Background(), nq, k, r, func(qs []int, m int) ([]int32, []float32, error) {
		if len(qs) > 512 {
			t.Fatalf("a block of %d queries, want at most 512", len(qs))
		}
		blocks++
		return engine(rng, r, all, &calls)(qs, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	if blocks < 3 {
		t.Errorf("%d blocks for %d queries of 512 at most", blocks, nq)
	}
	for q := range nq {
		if got, want := listOf(split, q), listOf(one, q); !slices.Equal(got, want) {
			t.Fatalf("query %d: %v in blocks, %v in one", q, got, want)
		}
	}
}

// TestMergeIsOneIndex checks that the canonical top k of shards, merged,
// are the canonical top k of all their rows: the rows split at random, ties
// across shards and at every shard's k-th place included.
func TestMergeIsOneIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const nq, n, k = 3, 400, 25
	r := makeRows(rng, nq, n, 60, 3)
	for _, shards := range []int{1, 2, 4, 7} {
		parts := make([][]int32, shards)
		for i := range int32(n) {
			s := rng.IntN(shards)
			parts[s] = append(parts[s], i)
		}
		lists := make([]channel.Hits, shards)
		for s, sub := range parts {
			calls := 0
			h, err := channel.Top(context.Background(), nq, k, subsetRows{r, sub}, subsetEngine(engine(rng, r, sub, &calls), sub))
			if err != nil {
				t.Fatal(err)
			}
			lists[s] = h
		}
		merged, err := channel.Merge(lists, k)
		if err != nil {
			t.Fatal(err)
		}
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		for q := range nq {
			want := canonical(r, q, all, k)
			for j, w := range want {
				got := merged.At(q, j)
				if got.Doc != w.Doc || got.Score != w.Score || got.Start != w.Start || parts[got.Shard][got.Row] != w.Row {
					t.Fatalf("%d shards, query %d rank %d: %+v (row %d of the whole), want %+v", shards, q, j, got, parts[got.Shard][got.Row], w)
				}
			}
		}
	}
}

// subsetEngine turns an engine returning rows of the whole into one
// returning rows of the subset.
func subsetEngine(f channel.SearchFunc, subset []int32) channel.SearchFunc {
	at := map[int32]int32{}
	for i, r := range subset {
		at[r] = int32(i)
	}
	return func(qs []int, n int) ([]int32, []float32, error) {
		rows, scores, err := f(qs, n)
		for i, r := range rows {
			if r >= 0 {
				rows[i] = at[r]
			}
		}
		return rows, scores, err
	}
}

// TestTopStops checks that a cancelled search stops with the context's
// error, and that an engine's error and a short answer are errors.
func TestTopStops(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	r := makeRows(rng, 2, 50, 10, 5)
	all := make([]int32, 50)
	for i := range all {
		all[i] = int32(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	if _, err := channel.Top(ctx, 2, 5, r, engine(rng, r, all, &calls)); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled: %v after %d calls", err, calls)
	}
	boom := errors.New("boom")
	if _, err := channel.Top(context.Background(), 2, 5, r, func([]int, int) ([]int32, []float32, error) { return nil, nil, boom }); !errors.Is(err, boom) {
		t.Errorf("engine error: %v", err)
	}
	if _, err := channel.Top(context.Background(), 2, 5, r, func([]int, int) ([]int32, []float32, error) { return []int32{1}, []float32{1}, nil }); err == nil {
		t.Error("a short answer passed")
	}
	if _, err := channel.Merge([]channel.Hits{channel.NewHits(2, 5), channel.NewHits(3, 5)}, 5); err == nil {
		t.Error("lists of other query counts merged")
	}
}

// TestTopStopsBetweenBlocks checks that a search cancelled while a block of
// queries is being searched stops before the next block: a batch of many
// queries is not searched to its end after Ctrl-C.
func TestTopStopsBetweenBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const nq = 5000
	r := makeRows(rng, nq, 40, 10, 40)
	all := make([]int32, 40)
	for i := range all {
		all[i] = int32(i)
	}
	defer channel.SetTopWork(40 * 512)() // blocks of 512 queries over 40 rows
	ctx, cancel := context.WithCancel(context.Background())
	calls, searched := 0, 0
	eng := engine(rng, r, all, &calls)
	_, err := channel.Top(ctx, nq, 5, r, func(qs []int, n int) ([]int32, []float32, error) {
		searched += len(qs)
		cancel() // Ctrl-C while the first block is searched
		return eng(qs, n)
	})
	if !errors.Is(err, context.Canceled) || calls != 1 || searched >= nq {
		t.Errorf("cancelled in the first block: %v after %d calls and %d of %d queries", err, calls, searched, nq)
	}
}
