package onnx

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/tokenizer"
)

func TestSessionThreads(t *testing.T) {
	for _, tc := range []struct {
		name     string
		o        Options
		dev      string
		batching Batching
		cpus     int
		want     []int
	}{
		{"single on the cpu: one per core", Options{}, DeviceCPU, BatchingSingle, 2, []int{1, 1}},
		{"single, 8 cores", Options{}, DeviceCPU, BatchingSingle, 8, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"single, --threads 1", Options{Threads: 1}, DeviceCPU, BatchingSingle, 8, []int{1}},
		{"single, --threads 3", Options{Threads: 3}, DeviceCPU, BatchingSingle, 8, []int{1, 1, 1}},
		{"padded: one with all threads", Options{}, DeviceCPU, BatchingPadded, 4, []int{4}},
		{"padded, --threads 3", Options{Threads: 3}, DeviceCPU, BatchingPadded, 8, []int{3}},
		{"cuda: one", Options{}, DeviceCUDA, BatchingSingle, 4, []int{4}},
		{"two sessions share the threads", Options{Sessions: 2}, DeviceCPU, BatchingPadded, 4, []int{2, 2}},
		{"uneven share", Options{Sessions: 2, Threads: 5}, DeviceCPU, BatchingSingle, 8, []int{3, 2}},
		{"more sessions than threads: one each", Options{Sessions: 4}, DeviceCPU, BatchingSingle, 2, []int{1, 1, 1, 1}},
		{"one session of all threads", Options{Sessions: 1}, DeviceCPU, BatchingSingle, 2, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sessionThreads(tc.o, tc.dev, tc.batching, tc.cpus); !slices.Equal(got, tc.want) {
				t.Fatalf("sessionThreads = %v, want %v", got, tc.want)
			}
		})
	}
}

// sampleQueries returns the first n of SciFact's query texts, or fewer
// (none) when SciFact is absent from the cache.
func sampleQueries(tb testing.TB, n int) []string {
	return readSciFact(tb, "queries.jsonl.gz", n)
}

// needTexts skips a test whose SciFact texts (every list of got) are
// fewer than n, SciFact being absent from the cache; under CI, where the
// data is there, it fails instead.
func needTexts(tb testing.TB, n int, got ...[]string) {
	tb.Helper()
	for _, texts := range got {
		if len(texts) >= n {
			continue
		}
		if !testfiles.UnderCI() {
			tb.Skipf("%d SciFact texts of %d: SciFact absent from %s (make setup)", len(texts), n, testfiles.DataDir("scifact"))
		}
		tb.Fatalf("%d SciFact texts of %d under CI: %s is missing or short", len(texts), n, testfiles.DataDir("scifact"))
	}
}

// sameBits reports the first float whose bits differ, or -1.
func sameBits(a, b []float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

// TestSessionsGiveTheSameBits embeds SciFact abstracts and queries one text
// per run through one session with all the cores (how every Embedder ran
// before it had several sessions) and through 2 and 4 sessions of one thread
// and the default: every vector must be the same to the bit.
func TestSessionsGiveTheSameBits(t *testing.T) {
	for _, tc := range []struct {
		model string
		n     int
	}{{"all-minilm-l6-v2-int8", 100}, {"e5-small-v2-int8", 24}} {
		t.Run(tc.model, func(t *testing.T) {
			passages, queries := sampleTexts(t, tc.n), sampleQueries(t, tc.n)
			needTexts(t, tc.n, passages, queries)
			one := openModel(t, tc.model, Options{Sessions: 1})
			if one.Sessions() != 1 || one.Batching() != BatchingSingle {
				t.Fatalf("reference: %d sessions, batching %v", one.Sessions(), one.Batching())
			}
			want := map[Role][]float32{}
			for role, texts := range map[Role][]string{Passage: passages, Query: queries} {
				v, err := one.Embed(context.Background(), texts, role)
				if err != nil {
					t.Fatal(err)
				}
				want[role] = v
			}
			for _, o := range []Options{{Sessions: 2}, {Sessions: 4}, {}} {
				e := openModel(t, tc.model, o)
				for role, texts := range map[Role][]string{Passage: passages, Query: queries} {
					got, err := e.Embed(context.Background(), texts, role)
					if err != nil {
						t.Fatal(err)
					}
					if i := sameBits(got, want[role]); i >= 0 {
						t.Errorf("%d sessions (threads %v), %s: text %d differs from one session's vector", e.Sessions(), e.Threads(), role, i/e.Dims())
					}
				}
				if st := e.Stats(); e.Sessions() > 1 && st.RunTime <= st.Busy {
					t.Errorf("%d sessions never ran at the same time: run time %v summed over sessions, busy %v", e.Sessions(), st.RunTime, st.Busy)
				}
			}
		})
	}
}

// contentIDs tokenizes texts into content ids that fit the role.
func contentIDs(e *Embedder, texts []string, role Role) [][]int32 {
	seqs := make([][]int32, len(texts))
	for i, enc := range e.Tokenizer().EncodeBatch(texts, tokenizer.Options{NoSpecial: true, MaxLength: -1}) {
		seqs[i] = enc.IDs[:min(len(enc.IDs), e.MaxContentTokens(role))]
	}
	return seqs
}

// TestSessionFailsMidRun: one sequence holds an id outside the vocabulary,
// which ONNX Runtime refuses in the middle of a call on two sessions. The
// call fails naming the session and the sequence and returns no vectors;
// the Embedder still embeds afterwards.
func TestSessionFailsMidRun(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2-int8", Options{Sessions: 2, Threads: 2})
	texts := sampleTexts(t, 30)
	needTexts(t, 30, texts)
	seqs := contentIDs(e, texts, Passage)
	want, err := e.EmbedTokens(context.Background(), seqs, Passage)
	if err != nil {
		t.Fatal(err)
	}
	const bad = 17
	broken := slices.Clone(seqs)
	broken[bad] = slices.Clone(seqs[bad])
	broken[bad][len(broken[bad])/2] = int32(e.Tokenizer().VocabSize() + 1000)
	before := e.Stats().Sequences
	got, err := e.EmbedTokens(context.Background(), broken, Passage)
	if !errors.Is(err, ErrRuntime) || got != nil || !strings.Contains(err.Error(), "sequence 17 ") || !strings.Contains(err.Error(), "session ") {
		t.Fatalf("a bad id in sequence %d: %d floats, error %v; want no vectors and an ErrRuntime naming the session and the sequence", bad, len(got), err)
	}
	if ran := e.Stats().Sequences - before; ran >= int64(len(seqs)) {
		t.Errorf("%d of %d sequences ran after the failure; the call should stop", ran, len(seqs))
	}
	again, err := e.EmbedTokens(context.Background(), seqs, Passage)
	if err != nil || sameBits(again, want) >= 0 {
		t.Fatalf("after a failed call: %v, or other vectors", err)
	}
}

// TestSessionsHandStatesInOrder: EmbedTokenStates on three sessions calls fn
// one sequence at a time, in the order one session calls it, with the same
// rows.
func TestSessionsHandStatesInOrder(t *testing.T) {
	texts := sampleTexts(t, 16)
	needTexts(t, 16, texts)
	type call struct {
		i    int
		rows []float32
	}
	record := func(e *Embedder) []call {
		var calls []call
		var inside atomic.Int32
		err := e.EmbedTokenStates(context.Background(), contentIDs(e, texts, Passage), Passage, func(i int, s embed.TokenStates) error {
			if inside.Add(1) != 1 {
				t.Error("fn called by two sessions at once")
			}
			defer inside.Add(-1)
			calls = append(calls, call{i, slices.Clone(s.Rows)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return calls
	}
	want := record(openModel(t, "all-minilm-l6-v2-int8", Options{Sessions: 1}))
	got := record(openModel(t, "all-minilm-l6-v2-int8", Options{Sessions: 3}))
	if len(got) != len(want) {
		t.Fatalf("%d calls, one session made %d", len(got), len(want))
	}
	for k := range want {
		if got[k].i != want[k].i || sameBits(got[k].rows, want[k].rows) >= 0 {
			t.Fatalf("call %d: sequence %d, one session handed sequence %d (or other rows)", k, got[k].i, want[k].i)
		}
	}
}

// TestCloseWhileEmbedding closes an Embedder of two sessions in the middle
// of a call: each session is closed once its batch is done, and the call
// fails with ErrClosed (run with -race).
func TestCloseWhileEmbedding(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2-int8", Options{Sessions: 2})
	texts := sampleTexts(t, 40)
	needTexts(t, 40, texts)
	var once sync.Once
	closed := make(chan error, 1)
	n := 0
	err := e.EmbedTokenStates(context.Background(), contentIDs(e, texts, Passage), Passage, func(int, embed.TokenStates) error {
		if n++; n == 3 {
			once.Do(func() { go func() { closed <- e.Close() }() })
		}
		return nil
	})
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("call during Close: %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

// TestStatsCountRunsInFlight: Stats taken while a run is in flight counts
// the run's time so far in Busy (a progress line divides by it), not only
// the runs that have ended.
func TestStatsCountRunsInFlight(t *testing.T) {
	var e Embedder
	e.busy.Begin()
	defer e.busy.End()
	time.Sleep(20 * time.Millisecond)
	if got := e.Stats().Busy; got < 20*time.Millisecond {
		t.Fatalf("Stats().Busy = %v while a run has been in flight for 20ms", got)
	}
}
