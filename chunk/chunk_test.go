package chunk_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/tokenizer"
)

// wordSpans returns the byte span of every space-separated word of text, the
// way a whitespace tokenizer would report them.
func wordSpans(tb testing.TB, text string) []chunk.Span {
	tb.Helper()
	var out []chunk.Span
	start := -1
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == ' ' {
			if start >= 0 {
				out = append(out, chunk.Span{Start: start, End: i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	return out
}

func mustNew(tb testing.TB, cfg chunk.Config) *chunk.Chunker {
	tb.Helper()
	c, err := chunk.New(cfg)
	if err != nil {
		tb.Fatalf("New(%+v): %v", cfg, err)
	}
	return c
}

// texts returns the chunk texts listed for each window, in order.
func texts(r *chunk.Result, text string) [][]string {
	out := make([][]string, len(r.Windows))
	for w, idx := range r.Windows {
		out[w] = []string{}
		for _, i := range idx {
			out[w] = append(out[w], r.Text(text, int(i)))
		}
	}
	return out
}

func TestSplitGolden(t *testing.T) {
	// Seven tokens: a0 ... g6. Expected windows are worked out by hand.
	const text = "a0 b1  c2 d3 e4 f5 g6"
	tests := []struct {
		name    string
		cfg     chunk.Config
		text    string
		windows [][]string
		chunks  []chunk.Chunk // checked when not nil
	}{
		{
			name:    "stride equals window, the last window moved back to the end",
			cfg:     chunk.Config{Windows: chunk.Sizes(3)},
			text:    text,
			windows: [][]string{{"a0 b1  c2", "d3 e4 f5", "e4 f5 g6"}},
			chunks: []chunk.Chunk{
				{Tokens: chunk.Span{Start: 0, End: 3}, Bytes: chunk.Span{Start: 0, End: 9}},
				{Tokens: chunk.Span{Start: 3, End: 6}, Bytes: chunk.Span{Start: 10, End: 18}},
				{Tokens: chunk.Span{Start: 4, End: 7}, Bytes: chunk.Span{Start: 13, End: 21}},
			},
		},
		{
			name:    "stride equals window, short tail kept",
			cfg:     chunk.Config{Windows: short(chunk.Sizes(3))},
			text:    text,
			windows: [][]string{{"a0 b1  c2", "d3 e4 f5", "g6"}},
			chunks: []chunk.Chunk{
				{Tokens: chunk.Span{Start: 0, End: 3}, Bytes: chunk.Span{Start: 0, End: 9}},
				{Tokens: chunk.Span{Start: 3, End: 6}, Bytes: chunk.Span{Start: 10, End: 18}},
				{Tokens: chunk.Span{Start: 6, End: 7}, Bytes: chunk.Span{Start: 19, End: 21}},
			},
		},
		{
			name:    "exact multiple has no empty tail",
			cfg:     chunk.Config{Windows: chunk.Sizes(7)},
			text:    text,
			windows: [][]string{{"a0 b1  c2 d3 e4 f5 g6"}},
		},
		{
			name: "overlap drops a tail inside the previous window",
			// starts 0, 2, 4; the window at 4 reaches the end, so the one at
			// 6 (g6, inside [4,7)) is not emitted.
			cfg:     chunk.Config{Windows: strided(2, 3)},
			text:    text,
			windows: [][]string{{"a0 b1  c2", "c2 d3 e4", "e4 f5 g6"}},
		},
		{
			name: "overlap: the last window moved back to the end",
			// window 4 stride 3 on 8 tokens: starts 0, 3, 6; [6,8) becomes [4,8).
			cfg:     chunk.Config{Windows: strided(3, 4)},
			text:    text + " h7",
			windows: [][]string{{"a0 b1  c2 d3", "d3 e4 f5 g6", "e4 f5 g6 h7"}},
		},
		{
			name: "overlap keeps a shorter tail that adds tokens",
			// starts 0, 3; [3,7) is full; window 4 stride 3 on 8 tokens: 0,3,6.
			cfg:     chunk.Config{Windows: short(strided(3, 4))},
			text:    text + " h7",
			windows: [][]string{{"a0 b1  c2 d3", "d3 e4 f5 g6", "g6 h7"}},
		},
		{
			name:    "short document is one chunk shared by all windows",
			cfg:     chunk.Config{Windows: chunk.Sizes(10, 5, 20)},
			text:    "x y z",
			windows: [][]string{{"x y z"}, {"x y z"}, {"x y z"}},
			chunks: []chunk.Chunk{
				{Tokens: chunk.Span{Start: 0, End: 3}, Bytes: chunk.Span{Start: 0, End: 5}},
			},
		},
		{
			name: "every window size ends at the document's end",
			// w=2: [0,2) [2,4) [4,6) [5,7); w=4: [0,4) [3,7); w=3: [0,3) [3,6) [4,7)
			cfg:     chunk.Config{Windows: chunk.Sizes(2, 4, 3)},
			text:    text,
			windows: [][]string{{"a0 b1", "c2 d3", "e4 f5", "f5 g6"}, {"a0 b1  c2 d3", "d3 e4 f5 g6"}, {"a0 b1  c2", "d3 e4 f5", "e4 f5 g6"}},
		},
		{
			name: "short tails shared between windows",
			// w=2: [0,2) [2,4) [4,6) [6,7); w=4: [0,4) [4,7); w=3: [0,3) [3,6) [6,7)
			// [6,7) is shared by w=2 and w=3.
			cfg:     chunk.Config{Windows: short(chunk.Sizes(2, 4, 3))},
			text:    text,
			windows: [][]string{{"a0 b1", "c2 d3", "e4 f5", "g6"}, {"a0 b1  c2 d3", "e4 f5 g6"}, {"a0 b1  c2", "d3 e4 f5", "g6"}},
		},
		{
			name:    "leading and trailing spaces are outside the chunk",
			cfg:     chunk.Config{Windows: chunk.Sizes(2)},
			text:    "  hé  là  ",
			windows: [][]string{{"hé  là"}},
		},
		{
			name: "full window: the first tokens, one chunk, shared with an equal window",
			// Truncate 4: [0,4) only; w=4 also has [0,4), so it is one chunk.
			cfg:     chunk.Config{Windows: []chunk.Window{{Size: 4, Truncate: true}, {Size: 4}}},
			text:    text,
			windows: [][]string{{"a0 b1  c2 d3"}, {"a0 b1  c2 d3", "d3 e4 f5 g6"}},
			chunks: []chunk.Chunk{
				{Tokens: chunk.Span{Start: 0, End: 4}, Bytes: chunk.Span{Start: 0, End: 12}},
				{Tokens: chunk.Span{Start: 3, End: 7}, Bytes: chunk.Span{Start: 10, End: 21}},
			},
		},
		{
			name:    "full window longer than the document keeps it all",
			cfg:     chunk.Config{Windows: []chunk.Window{{Size: 50, Truncate: true}}},
			text:    "x y z",
			windows: [][]string{{"x y z"}},
		},
		{
			name:    "no tokens, no chunks",
			cfg:     chunk.Config{Windows: chunk.Sizes(3, 5)},
			text:    "   ",
			windows: [][]string{{}, {}},
			chunks:  []chunk.Chunk{},
		},
	}
	var r chunk.Result // shared on purpose: reuse must not leak state
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, tt.cfg)
			if err := c.Split(tt.text, wordSpans(t, tt.text), &r); err != nil {
				t.Fatal(err)
			}
			if got := texts(&r, tt.text); !reflect.DeepEqual(got, tt.windows) {
				t.Errorf("windows:\n got %q\nwant %q", got, tt.windows)
			}
			if tt.chunks != nil && !reflect.DeepEqual(append([]chunk.Chunk{}, r.Chunks...), tt.chunks) {
				t.Errorf("chunks:\n got %+v\nwant %+v", r.Chunks, tt.chunks)
			}
		})
	}
}

func TestSplitSharedIndices(t *testing.T) {
	const text = "a0 b1  c2 d3 e4 f5 g6"
	for _, tc := range []struct {
		windows []chunk.Window
		want    [][]int32
		unique  int
	}{
		// Unique chunks in order of first appearance: w=2 gives 0..3 ([5,7)
		// is 3), w=4 gives 4, 5 ([3,7)), w=3 gives 6 ([0,3)), 7 ([3,6)) and 8
		// ([4,7)).
		{chunk.Sizes(2, 4, 3), [][]int32{{0, 1, 2, 3}, {4, 5}, {6, 7, 8}}, 9},
		// Short tails: w=2's [6,7) is 3, and w=3 reuses it.
		{short(chunk.Sizes(2, 4, 3)), [][]int32{{0, 1, 2, 3}, {4, 5}, {6, 7, 3}}, 8},
	} {
		c := mustNew(t, chunk.Config{Windows: tc.windows})
		var r chunk.Result
		if err := c.Split(text, wordSpans(t, text), &r); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Windows, tc.want) {
			t.Errorf("%+v: Windows = %v, want %v", tc.windows, r.Windows, tc.want)
		}
		if len(r.Chunks) != tc.unique {
			t.Errorf("%+v: %d unique chunks, want %d", tc.windows, len(r.Chunks), tc.unique)
		}
	}
}

// short returns ws with short tails.
func short(ws []chunk.Window) []chunk.Window {
	for i := range ws {
		ws[i].ShortTail = true
	}
	return ws
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  chunk.Config
		want error
		msg  string
	}{
		{"empty", chunk.Config{}, chunk.ErrConfig, "chunk: no window sizes given"},
		{"zero", chunk.Config{Windows: chunk.Sizes(100, 0)}, chunk.ErrConfig, "chunk: window 0 (position 1) must be a positive number of tokens"},
		{"negative", chunk.Config{Windows: chunk.Sizes(-5)}, chunk.ErrConfig, "chunk: window -5 (position 0) must be a positive number of tokens"},
		{"duplicate", chunk.Config{Windows: chunk.Sizes(100, 200, 100)}, chunk.ErrConfig, "chunk: window w100 given twice (positions 0 and 2)"},
		{"stride too big", chunk.Config{Windows: strided(60, 100, 50)}, chunk.ErrConfig, "chunk: stride 60 exceeds window 50, tokens would be skipped"},
		{"negative stride", chunk.Config{Windows: strided(-1, 100)}, chunk.ErrConfig, "chunk: stride -1 of window 100 is negative"},
		{"too long", chunk.Config{Windows: chunk.Sizes(100, 600), MaxTokens: 512, PrefixTokens: 2, SpecialTokens: 2}, chunk.ErrTooLong,
			"chunk: window 600 + 2 prefix tokens + 2 special tokens = 604 exceeds the model's maximum of 512 tokens"},
		{"two full windows", chunk.Config{Windows: []chunk.Window{{Size: 5, Truncate: true}, {Size: 9, Truncate: true}}}, chunk.ErrConfig, "chunk: window full given twice (positions 0 and 1)"},
		{"full window with a stride", chunk.Config{Windows: []chunk.Window{{Size: 5, Stride: 2, Truncate: true}}}, chunk.ErrConfig, "chunk: the full window (position 0) has no stride"},
		{"full window with a tail", chunk.Config{Windows: []chunk.Window{{Size: 5, Truncate: true, ShortTail: true}}}, chunk.ErrConfig, "chunk: the full window (position 0) has no tail"},
		{"full window too long", chunk.Config{Windows: []chunk.Window{{Size: 600, Truncate: true}}, MaxTokens: 512}, chunk.ErrTooLong, "chunk: window 600 + 0 prefix tokens"},
		{"one over", chunk.Config{Windows: chunk.Sizes(509), MaxTokens: 512, PrefixTokens: 2, SpecialTokens: 2}, chunk.ErrTooLong,
			"chunk: window 509 + 2 prefix tokens + 2 special tokens = 513 exceeds the model's maximum of 512 tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := chunk.New(tt.cfg)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New(%+v) = %v, want %v", tt.cfg, err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("error %q does not start with %q", err, tt.msg)
			}
		})
	}
	if _, err := chunk.New(chunk.Config{Windows: chunk.Sizes(508), MaxTokens: 512, PrefixTokens: 2, SpecialTokens: 2}); err != nil {
		t.Errorf("a window that fits exactly: %v", err)
	}
}

func TestFullWindowSize(t *testing.T) {
	c := mustNew(t, chunk.Config{Windows: []chunk.Window{{Size: 100}, chunk.Full}, MaxTokens: 512, PrefixTokens: 3, SpecialTokens: 2})
	if got := c.Config().Windows[1]; got != (chunk.Window{Size: 507, Truncate: true}) {
		t.Errorf("full window resolved to %+v, want 507 tokens (512 less 3 prefix and 2 special)", got)
	}
	if got := c.Config().Windows[1].Name(); got != "full" {
		t.Errorf("Name() = %q, want full", got)
	}
	if _, err := chunk.New(chunk.Config{Windows: []chunk.Window{chunk.Full}}); !errors.Is(err, chunk.ErrConfig) {
		t.Errorf("full window without a model maximum: %v, want ErrConfig", err)
	}
}

func TestSplitBadOffsets(t *testing.T) {
	c := mustNew(t, chunk.Config{Windows: chunk.Sizes(2)})
	tests := []struct {
		name string
		text string
		offs []chunk.Span
	}{
		{"past the end", "abc", []chunk.Span{{0, 1}, {2, 4}}},
		{"backwards", "abcdef", []chunk.Span{{2, 3}, {0, 1}}},
		{"end before start", "abcdef", []chunk.Span{{2, 1}}},
		{"negative", "abc", []chunk.Span{{-1, 1}}},
		{"inside a rune", "é", []chunk.Span{{0, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r chunk.Result
			err := c.Split(tt.text, tt.offs, &r)
			if !errors.Is(err, chunk.ErrOffsets) {
				t.Fatalf("Split = %v, want ErrOffsets", err)
			}
			if len(r.Chunks) != 0 {
				t.Errorf("%d chunks left after an error", len(r.Chunks))
			}
		})
	}
}

func TestSpans(t *testing.T) {
	type offset struct{ Start, End int } // same shape as the tokenizer's
	got := chunk.Spans(nil, []offset{{0, 2}, {3, 5}})
	want := []chunk.Span{{0, 2}, {3, 5}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Spans = %v, want %v", got, want)
	}
}

func TestSplitAllocs(t *testing.T) {
	text, offs := synthetic(1000, 1)
	c := mustNew(t, chunk.Config{Windows: chunk.Sizes(100, 200, 500)})
	var r chunk.Result
	if err := c.Split(text, offs, &r); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() { _ = c.Split(text, offs, &r) })
	if allocs != 0 {
		t.Errorf("Split with a reused Result allocates %v times per call, want 0", allocs)
	}
}

// synthetic returns a text of n words of 1 to 8 letters, some of them
// multi-byte, and the span of each word.
func synthetic(n int, seed uint64) (string, []chunk.Span) {
	rng := rand.New(rand.NewPCG(seed, 0))
	var sb strings.Builder
	offs := make([]chunk.Span, 0, n)
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(' ')
		}
		start := sb.Len()
		for k := rng.IntN(8); k >= 0; k-- {
			if rng.IntN(10) == 0 {
				sb.WriteString("é")
			} else {
				sb.WriteByte(byte('a' + rng.IntN(26)))
			}
		}
		offs = append(offs, chunk.Span{Start: start, End: sb.Len()})
	}
	return sb.String(), offs
}

// checkInvariants verifies what every Split must hold, without recomputing
// the windows the way Split does.
func checkInvariants(tb testing.TB, cfg chunk.Config, text string, offs []chunk.Span, r *chunk.Result) {
	tb.Helper()
	n := len(offs)
	if len(r.Windows) != len(cfg.Windows) {
		tb.Fatalf("%d window lists for %d windows", len(r.Windows), len(cfg.Windows))
	}
	used := make([]bool, len(r.Chunks))
	for wi, win := range cfg.Windows {
		w := win.Size
		if win.Truncate {
			checkTruncated(tb, win, n, r, r.Windows[wi], used)
			continue
		}
		covered := 0 // tokens [0, covered) are inside some window so far
		prevStart := -1
		for k, idx := range r.Windows[wi] {
			ch := r.Chunks[idx]
			used[idx] = true
			tk, b := ch.Tokens, ch.Bytes
			if tk.Len() <= 0 || tk.Len() > w {
				tb.Fatalf("w=%d window %d has %d tokens", w, k, tk.Len())
			}
			if tk.Start > covered || tk.Start <= prevStart || tk.End <= covered && k > 0 {
				tb.Fatalf("w=%d window %d %v: gap, disorder or contained in previous (covered %d)", w, k, tk, covered)
			}
			if tk.Len() < w && tk.End != n {
				tb.Fatalf("w=%d window %d %v short but not at the end (%d tokens)", w, k, tk, n)
			}
			if !win.ShortTail && tk.Len() != min(w, n) {
				tb.Fatalf("w=%d window %d %v of a document of %d tokens: want %d tokens in every window", w, k, tk, n, min(w, n))
			}
			if b.Start != offs[tk.Start].Start || b.End != offs[tk.End-1].End {
				tb.Fatalf("w=%d window %d bytes %v, tokens %v", w, k, b, tk)
			}
			if b.Start < 0 || b.End > len(text) || b.Start > b.End || !utf8.ValidString(text[b.Start:b.End]) {
				tb.Fatalf("w=%d window %d bytes %v outside text or off UTF-8 boundaries", w, k, b)
			}
			prevStart, covered = tk.Start, tk.End
		}
		if covered != n {
			tb.Fatalf("w=%d windows cover %d of %d tokens", w, covered, n)
		}
	}
	seen := map[chunk.Span]bool{}
	for i, ch := range r.Chunks {
		if !used[i] {
			tb.Fatalf("chunk %d listed by no window", i)
		}
		if seen[ch.Tokens] {
			tb.Fatalf("chunk %v appears twice", ch.Tokens)
		}
		seen[ch.Tokens] = true
	}
}

// checkTruncated verifies a Truncate window's list: one chunk of the first
// min(Size, n) tokens, none for an empty document.
func checkTruncated(tb testing.TB, w chunk.Window, n int, r *chunk.Result, list []int32, used []bool) {
	tb.Helper()
	if n == 0 {
		if len(list) != 0 {
			tb.Fatalf("full window: %d chunks of an empty document", len(list))
		}
		return
	}
	if len(list) != 1 {
		tb.Fatalf("full window: %d chunks, want 1", len(list))
	}
	used[list[0]] = true
	if got, want := r.Chunks[list[0]].Tokens, (chunk.Span{Start: 0, End: min(w.Size, n)}); got != want {
		tb.Fatalf("full window of %d tokens: chunk %v, want %v", w.Size, got, want)
	}
}

// strided returns windows of the given sizes, all with one stride.
func strided(stride int, sizes ...int) []chunk.Window {
	ws := chunk.Sizes(sizes...)
	for i := range ws {
		ws[i].Stride = stride
	}
	return ws
}

func FuzzSplit(f *testing.F) {
	f.Add("a0 b1  c2 d3 e4 f5 g6", uint8(3), uint8(0), uint8(5))
	f.Add("héllo wörld ünïcode", uint8(2), uint8(1), uint8(7))
	f.Add("", uint8(1), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, text string, w1, stride, w2 uint8) {
		if !utf8.ValidString(text) {
			text = strings.ToValidUTF8(text, "?")
		}
		a, b := int(w1%50)+1, int(w2%50)+1
		if a == b {
			b++
		}
		ws := strided(int(stride)%(min(a, b)+1), a, b)
		ws[0].ShortTail = w2%2 == 1
		cfg := chunk.Config{Windows: append(ws, chunk.Window{Size: int(w1%7) + 1, Truncate: true})}
		c := mustNew(t, cfg)
		// Tokens: each rune that is not a space, so spans fall on rune edges.
		var offs []chunk.Span
		for i, r := range text {
			if r != ' ' {
				offs = append(offs, chunk.Span{Start: i, End: i + utf8.RuneLen(r)})
			}
		}
		var r chunk.Result
		if err := c.Split(text, offs, &r); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, cfg, text, offs, &r)
	})
}

func TestInvariantsRandom(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		text, offs := synthetic(int(seed*37%400), seed)
		cfg := chunk.Config{Windows: strided(int(seed%8), 100, 7, 33)}
		if seed%2 == 1 {
			cfg.Windows = short(cfg.Windows)
		}
		c := mustNew(t, cfg)
		var r chunk.Result
		if err := c.Split(text, offs, &r); err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, cfg, text, offs, &r)
	}
}

func BenchmarkSplit(b *testing.B) {
	for _, n := range []int{50, 300, 5000} {
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			text, offs := synthetic(n, 42)
			c := mustNew(b, chunk.Config{Windows: chunk.Sizes(100, 200, 500)})
			var r chunk.Result
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Split(text, offs, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// TestSpansFromTokenizer keeps chunk in step with the tokenizer's Offset:
// if its shape changes, this stops compiling.
func TestSpansFromTokenizer(t *testing.T) {
	offs := []tokenizer.Offset{{Start: 0, End: 3}, {Start: 4, End: 9}}
	got := chunk.Spans(make([]chunk.Span, 5), offs)
	want := []chunk.Span{{0, 3}, {4, 9}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Spans = %v, want %v", got, want)
	}
}
