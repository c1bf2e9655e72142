package chunk

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Errors returned by [New] and [Chunker.Split], for use with [errors.Is].
var (
	// ErrConfig reports an invalid [Config].
	ErrConfig = errors.New("invalid configuration")
	// ErrTooLong reports a window that cannot fit the model's maximum length.
	ErrTooLong = errors.New("window exceeds the model's maximum length")
	// ErrOffsets reports token spans that are out of order, outside the text
	// or not on UTF-8 boundaries.
	ErrOffsets = errors.New("invalid token offsets")
)

// Span is a half-open range [Start, End): bytes of a text or tokens of a
// document. It has the layout of the tokenizer's Offset.
type Span struct{ Start, End int }

// Len returns End - Start.
func (s Span) Len() int { return s.End - s.Start }

// Chunk is one unique window of a document.
type Chunk struct {
	Tokens Span // content tokens [Start, End) of the document
	Bytes  Span // bytes of the original text, first token's start to last token's end
}

// Window is one window size: Size tokens, starting every Stride tokens, or,
// with Truncate, only each document's first Size tokens (the way an embedder
// truncates a whole document: the "full" window).
type Window struct {
	// Size is the window's length in content tokens. For a Truncate window,
	// 0 means the most content tokens the model takes (resolved by [New]).
	Size int
	// Stride is the step between window starts; 0 means Size (no overlap).
	// Otherwise it must be between 1 and Size, since a larger step would skip
	// tokens. A Truncate window has no stride.
	Stride int
	// Truncate keeps only the first window of each document.
	Truncate bool
	// ShortTail keeps the last window where the stride puts it, reaching
	// the document's end with fewer than Size tokens (as few as one).
	// By default (false) the last window is moved back to end at the
	// document's end with Size tokens, overlapping the one before it: a tail
	// of a token or two embeds to a vector of no content, which short
	// queries find before real passages.
	ShortTail bool
}

// Sizes returns sliding windows of the given sizes, without overlap.
func Sizes(sizes ...int) []Window {
	out := make([]Window, len(sizes))
	for i, s := range sizes {
		out[i] = Window{Size: s}
	}
	return out
}

// Full is the window of each document's first tokens, as many as the model
// takes: a document embedded whole and truncated, as MTEB embeds documents.
var Full = Window{Truncate: true}

// Name names the window in file names and reports: "w100" for a sliding
// window of 100 tokens, "full" for the Truncate window.
func (w Window) Name() string {
	if w.Truncate {
		return "full"
	}
	return "w" + strconv.Itoa(w.Size)
}

// Step returns the distance between window starts: Stride, or Size when
// Stride is 0.
func (w Window) Step() int {
	if w.Stride == 0 || w.Truncate {
		return w.Size
	}
	return w.Stride
}

// Config lists the windows and what surrounds a window at embedding time.
// The zero value is not valid: Windows must be set.
type Config struct {
	// Windows are the windows: sliding windows of distinct sizes and at most
	// one Truncate window. Their order is kept: Result.Windows[i] belongs to
	// Windows[i].
	Windows []Window
	// MaxTokens is the model's maximum sequence length; 0 skips the check
	// (and then a Truncate window needs a Size).
	MaxTokens int
	// PrefixTokens is the number of tokens of the role prefix ("passage: ").
	PrefixTokens int
	// SpecialTokens is the number of special tokens the model adds ([CLS],
	// [SEP], ...).
	SpecialTokens int
}

// Chunker cuts documents into windows. It is immutable and safe for
// concurrent use.
type Chunker struct {
	cfg Config
}

// New validates cfg and returns a Chunker. It copies cfg.Windows and
// resolves the Size of a Truncate window given as 0.
func New(cfg Config) (*Chunker, error) {
	if len(cfg.Windows) == 0 {
		return nil, fmt.Errorf("chunk: no window sizes given: %w", ErrConfig)
	}
	if cfg.PrefixTokens < 0 || cfg.SpecialTokens < 0 || cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("chunk: negative token count (max %d, prefix %d, special %d): %w",
			cfg.MaxTokens, cfg.PrefixTokens, cfg.SpecialTokens, ErrConfig)
	}
	cfg.Windows = slices.Clone(cfg.Windows)
	room := cfg.MaxTokens - cfg.PrefixTokens - cfg.SpecialTokens
	for i := range cfg.Windows {
		w := &cfg.Windows[i]
		if w.Truncate && w.Size == 0 && cfg.MaxTokens > 0 {
			w.Size = room
		}
		if err := cfg.check(i); err != nil {
			return nil, err
		}
	}
	return &Chunker{cfg: cfg}, nil
}

// check validates window i against the ones before it and the model's room.
func (cfg *Config) check(i int) error {
	w := cfg.Windows[i]
	switch {
	case w.Size <= 0:
		return fmt.Errorf("chunk: window %d (position %d) must be a positive number of tokens: %w", w.Size, i, ErrConfig)
	case w.Truncate && w.Stride != 0:
		return fmt.Errorf("chunk: the full window (position %d) has no stride, got %d: %w", i, w.Stride, ErrConfig)
	case w.Truncate && w.ShortTail:
		return fmt.Errorf("chunk: the full window (position %d) has no tail: %w", i, ErrConfig)
	case w.Stride < 0:
		return fmt.Errorf("chunk: stride %d of window %d is negative: %w", w.Stride, w.Size, ErrConfig)
	case w.Stride > w.Size:
		return fmt.Errorf("chunk: stride %d exceeds window %d, tokens would be skipped: %w", w.Stride, w.Size, ErrConfig)
	}
	for j, o := range cfg.Windows[:i] {
		if o.Truncate == w.Truncate && (w.Truncate || o.Size == w.Size) {
			return fmt.Errorf("chunk: window %s given twice (positions %d and %d): %w", w.Name(), j, i, ErrConfig)
		}
	}
	if cfg.MaxTokens > 0 {
		if total := w.Size + cfg.PrefixTokens + cfg.SpecialTokens; total > cfg.MaxTokens {
			room := cfg.MaxTokens - cfg.PrefixTokens - cfg.SpecialTokens
			var sizes []int
			for _, o := range cfg.Windows {
				if !o.Truncate {
					sizes = append(sizes, o.Size)
				}
			}
			return fmt.Errorf("chunk: window %d + %d prefix tokens + %d special tokens = %d exceeds the model's maximum of %d tokens (%d of content; windows that fit: %s): %w",
				w.Size, cfg.PrefixTokens, cfg.SpecialTokens, total, cfg.MaxTokens, room, joinSizes(Fit(sizes, room)), ErrTooLong)
		}
	}
	return nil
}

// Fit returns the window sizes of sizes that are at most room content
// tokens, with room itself in place of those that are larger, in
// ascending order, each once: a set of windows that fits a model with that
// room (100,200,500 for all-MiniLM-L6-v2's 254 tokens of content:
// 100,200,254).
func Fit(sizes []int, room int) []int {
	var out []int
	for _, s := range sizes {
		out = append(out, min(s, room))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// joinSizes writes sizes as 100,200,254.
func joinSizes(sizes []int) string {
	s := make([]string, len(sizes))
	for i, v := range sizes {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

// Config returns a copy of the configuration, Truncate sizes resolved.
func (c *Chunker) Config() Config {
	cfg := c.cfg
	cfg.Windows = slices.Clone(cfg.Windows)
	return cfg
}

// Result is the output of [Chunker.Split] for one document, and the reusable
// buffers behind it. The zero value is ready to use. Its slices are
// overwritten by the next Split.
type Result struct {
	// Chunks are the unique chunks in order of first appearance.
	Chunks []Chunk
	// Windows[i] lists, for window size Config.Windows[i], the indices into
	// Chunks of its windows in document order.
	Windows [][]int32

	seen map[Span]int32
}

// Text returns the text of chunk i, a substring of the document's text.
func (r *Result) Text(text string, i int) string {
	b := r.Chunks[i].Bytes
	return text[b.Start:b.End]
}

// Split cuts one document into windows. text is the document's original text
// and offs the byte span of each content token in it. The result goes into
// dst, replacing what it held. Offsets must have 0 <= Start <= End <= len(text)
// and non-decreasing starts, and every chunk must begin and end on a UTF-8
// boundary; otherwise Split returns an error wrapping [ErrOffsets] and dst is
// left empty.
func (c *Chunker) Split(text string, offs []Span, dst *Result) error {
	dst.Chunks = dst.Chunks[:0]
	if cap(dst.Windows) < len(c.cfg.Windows) {
		dst.Windows = make([][]int32, len(c.cfg.Windows))
	}
	dst.Windows = dst.Windows[:len(c.cfg.Windows)]
	for i := range dst.Windows {
		dst.Windows[i] = dst.Windows[i][:0]
	}
	if dst.seen == nil {
		dst.seen = make(map[Span]int32)
	} else {
		clear(dst.seen)
	}
	if err := checkOffsets(text, offs); err != nil {
		return err
	}
	n := len(offs)
	for wi, w := range c.cfg.Windows {
		s := w.Step()
		for start := 0; start < n; start += s {
			end := min(start+w.Size, n)
			if end == n && !w.ShortTail && !w.Truncate {
				start = max(0, n-w.Size)
			}
			idx, err := dst.chunk(text, offs, Span{start, end})
			if err != nil {
				dst.reset()
				return fmt.Errorf("chunk: window %s tokens [%d,%d): %w", w.Name(), start, end, err)
			}
			dst.Windows[wi] = append(dst.Windows[wi], idx)
			if end == n || w.Truncate {
				break
			}
		}
	}
	return nil
}

// chunk returns the index of the chunk of token range tok, adding it when it
// is new.
func (r *Result) chunk(text string, offs []Span, tok Span) (int32, error) {
	if idx, ok := r.seen[tok]; ok {
		return idx, nil
	}
	b := Span{offs[tok.Start].Start, offs[tok.End-1].End}
	if err := checkBoundary(text, b); err != nil {
		return 0, err
	}
	idx := int32(len(r.Chunks))
	r.Chunks = append(r.Chunks, Chunk{Tokens: tok, Bytes: b})
	r.seen[tok] = idx
	return idx, nil
}

func (r *Result) reset() {
	r.Chunks = r.Chunks[:0]
	for i := range r.Windows {
		r.Windows[i] = r.Windows[i][:0]
	}
}

func checkOffsets(text string, offs []Span) error {
	prev := 0
	for i, o := range offs {
		if o.Start < prev || o.Start > o.End || o.End > len(text) {
			return fmt.Errorf("chunk: token %d has byte span [%d,%d) in a text of %d bytes after a token starting at %d: %w",
				i, o.Start, o.End, len(text), prev, ErrOffsets)
		}
		prev = o.Start
	}
	return nil
}

func checkBoundary(text string, b Span) error {
	if b.End < b.Start {
		return fmt.Errorf("byte span [%d,%d) ends before it starts: %w", b.Start, b.End, ErrOffsets)
	}
	if (b.Start < len(text) && !utf8.RuneStart(text[b.Start])) || (b.End < len(text) && !utf8.RuneStart(text[b.End])) {
		return fmt.Errorf("byte span [%d,%d) does not fall on UTF-8 boundaries: %w", b.Start, b.End, ErrOffsets)
	}
	return nil
}

// Spans converts token offsets of any struct type with the fields Start and
// End (such as the tokenizer's Offset) into dst, reusing its storage.
func Spans[O ~struct{ Start, End int }](dst []Span, offs []O) []Span {
	dst = slices.Grow(dst[:0], len(offs))
	for _, o := range offs {
		dst = append(dst, Span(o))
	}
	return dst
}
