package chunk

import (
	"errors"
	"fmt"
	"slices"
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

// Config lists the window sizes and what surrounds a window at embedding time.
// The zero value is not valid: Windows must be set.
type Config struct {
	// Windows are the window sizes in content tokens, each > 0, no repeats.
	// Their order is kept: Result.Windows[i] belongs to Windows[i].
	Windows []int
	// Stride is the step between window starts. 0 means each window's own
	// size (no overlap). Otherwise it must be between 1 and the smallest
	// window, since a larger step would skip tokens.
	Stride int
	// MaxTokens is the model's maximum sequence length; 0 skips the check.
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

// New validates cfg and returns a Chunker. It copies cfg.Windows.
func New(cfg Config) (*Chunker, error) {
	if len(cfg.Windows) == 0 {
		return nil, fmt.Errorf("chunk: no window sizes given: %w", ErrConfig)
	}
	if cfg.PrefixTokens < 0 || cfg.SpecialTokens < 0 || cfg.MaxTokens < 0 {
		return nil, fmt.Errorf("chunk: negative token count (max %d, prefix %d, special %d): %w",
			cfg.MaxTokens, cfg.PrefixTokens, cfg.SpecialTokens, ErrConfig)
	}
	for i, w := range cfg.Windows {
		if w <= 0 {
			return nil, fmt.Errorf("chunk: window %d (position %d) must be a positive number of tokens: %w", w, i, ErrConfig)
		}
		if j := slices.Index(cfg.Windows[:i], w); j >= 0 {
			return nil, fmt.Errorf("chunk: window %d given twice (positions %d and %d): %w", w, j, i, ErrConfig)
		}
		if cfg.Stride < 0 {
			return nil, fmt.Errorf("chunk: stride %d is negative: %w", cfg.Stride, ErrConfig)
		}
		if cfg.Stride > w {
			return nil, fmt.Errorf("chunk: stride %d exceeds window %d, tokens would be skipped: %w", cfg.Stride, w, ErrConfig)
		}
		if cfg.MaxTokens > 0 {
			if total := w + cfg.PrefixTokens + cfg.SpecialTokens; total > cfg.MaxTokens {
				return nil, fmt.Errorf("chunk: window %d + %d prefix tokens + %d special tokens = %d exceeds the model's maximum of %d tokens: %w",
					w, cfg.PrefixTokens, cfg.SpecialTokens, total, cfg.MaxTokens, ErrTooLong)
			}
		}
	}
	cfg.Windows = slices.Clone(cfg.Windows)
	return &Chunker{cfg: cfg}, nil
}

// Config returns a copy of the configuration.
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
		s := c.cfg.Stride
		if s == 0 {
			s = w
		}
		for start := 0; start < n; start += s {
			end := min(start+w, n)
			tok := Span{start, end}
			idx, ok := dst.seen[tok]
			if !ok {
				b := Span{offs[start].Start, offs[end-1].End}
				if err := checkBoundary(text, b); err != nil {
					dst.reset()
					return fmt.Errorf("chunk: window %d tokens [%d,%d): %w", w, start, end, err)
				}
				idx = int32(len(dst.Chunks))
				dst.Chunks = append(dst.Chunks, Chunk{Tokens: tok, Bytes: b})
				dst.seen[tok] = idx
			}
			dst.Windows[wi] = append(dst.Windows[wi], idx)
			if end == n {
				break
			}
		}
	}
	return nil
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
