package late

import (
	"errors"
	"fmt"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/embed"
)

// ErrConfig reports segment sizes that cannot cut a document.
var ErrConfig = errors.New("late: invalid segments")

// DefaultOverlap is the overlap of segments of size content tokens when none
// is asked for: a quarter of them.
func DefaultOverlap(size int) int { return size / 4 }

// Check fails unless segments of size content tokens sharing overlap tokens
// can cut a document at a sane cost: size >= 1 and 0 <= overlap <=
// size/2. A larger overlap is refused: each segment advances by
// size-overlap tokens, so an overlap of 253 in 254-token segments would
// encode every token of a long document 254 times instead of about twice.
func Check(size, overlap int) error {
	if size < 1 || overlap < 0 || overlap > size/2 {
		return fmt.Errorf("late: segments of %d content tokens with an overlap of %d: the overlap must be at least 0 and at most half a segment (%d): %w",
			size, overlap, max(size/2, 0), ErrConfig)
	}
	return nil
}

// Segments appends to dst the segments of a document of n content tokens:
// [0, n) when n <= size; otherwise spans of size tokens starting every
// size-overlap tokens, the last one moved back to end at n. Size and overlap
// must pass Check.
func Segments(dst []chunk.Span, n, size, overlap int) []chunk.Span {
	if n <= size {
		return append(dst, chunk.Span{Start: 0, End: n})
	}
	step := size - overlap
	start := 0
	for ; start+size < n; start += step {
		dst = append(dst, chunk.Span{Start: start, End: start + size})
	}
	return append(dst, chunk.Span{Start: n - size, End: n})
}

// Piece is one part of a window's pool: tokens of the document taken from
// one segment's pass.
type Piece struct {
	// Seg indexes the document's segments.
	Seg int32
	// Tokens are content tokens of the document, within the segment.
	Tokens chunk.Span
	// Lead takes in the rows in front of the segment's content (the leading
	// special tokens and the prefix), Trail the rows after it; set when the
	// piece starts (ends) where the segment does.
	Lead, Trail bool
}

// Pieces appends to dst the pieces of window w over segs (as Segments cuts
// them): one piece from the segment that holds all of w with the most
// context on both sides (the earliest of equals); when none holds it, each
// token from the segment that holds that token with the most context,
// consecutive tokens of one segment in one piece.
func Pieces(dst []Piece, segs []chunk.Span, w chunk.Span) []Piece {
	best, most := -1, -1
	for i, s := range segs {
		if s.Start <= w.Start && w.End <= s.End {
			if c := min(w.Start-s.Start, s.End-w.End); c > most {
				best, most = i, c
			}
		}
	}
	if best >= 0 {
		return append(dst, piece(segs, best, w))
	}
	first := len(dst)
	for t := w.Start; t < w.End; t++ {
		o := owner(segs, t)
		if n := len(dst); n > first && int(dst[n-1].Seg) == o {
			dst[n-1].Tokens.End = t + 1
			continue
		}
		dst = append(dst, Piece{Seg: int32(o), Tokens: chunk.Span{Start: t, End: t + 1}})
	}
	for i := first; i < len(dst); i++ {
		dst[i] = piece(segs, int(dst[i].Seg), dst[i].Tokens)
	}
	return dst
}

// piece is the piece of tokens t from segment i, with its edges.
func piece(segs []chunk.Span, i int, t chunk.Span) Piece {
	s := segs[i]
	return Piece{Seg: int32(i), Tokens: t, Lead: t.Start == s.Start, Trail: t.End == s.End}
}

// owner is the segment that holds token t with the most context on both
// sides, the earliest of equals.
func owner(segs []chunk.Span, t int) int {
	best, most := -1, -1
	for i, s := range segs {
		if s.Start > t {
			break
		}
		if t < s.End {
			if c := min(t-s.Start, s.End-1-t); c > most {
				best, most = i, c
			}
		}
	}
	return best
}

// Add adds to sum the rows of st that piece p takes from its segment seg
// (whose content tokens are st's content rows) and returns how many rows it
// added. The rows are added in order, as a mean pooling over the whole
// sequence adds them.
func Add(sum []float32, st embed.TokenStates, seg chunk.Span, p Piece) int {
	dims := len(sum)
	lo := st.Lead + p.Tokens.Start - seg.Start
	hi := st.Lead + p.Tokens.End - seg.Start
	if p.Lead {
		lo = 0
	}
	if p.Trail {
		hi = st.Len(dims)
	}
	for r := lo; r < hi; r++ {
		for k, v := range st.Rows[r*dims : (r+1)*dims] {
			sum[k] += v
		}
	}
	return hi - lo
}

// Mean turns the sum of count rows into the window's vector in place: their
// mean, scaled to unit length when normalize is set.
func Mean(sum []float32, count int, normalize bool) {
	if count > 0 {
		inv := 1 / float32(count)
		for k := range sum {
			sum[k] *= inv
		}
	}
	if normalize {
		embed.Normalize(sum)
	}
}

// Edges says which rows besides a window's own tokens its pool takes in.
type Edges int

const (
	// EdgesSegment takes in the rows before the content (the leading special
	// tokens and the prefix) for a piece that starts its segment, and the
	// rows after it for one that ends it, as the paper does (Pieces).
	EdgesSegment Edges = iota
	// EdgesNone pools a window's own tokens only.
	EdgesNone
)

var edgesNames = [...]string{EdgesSegment: "segment", EdgesNone: "none"}

func (e Edges) String() string {
	if e < 0 || int(e) >= len(edgesNames) {
		return fmt.Sprintf("Edges(%d)", int(e))
	}
	return edgesNames[e]
}

// ParseEdges returns the Edges named s ("segment" or "none").
func ParseEdges(s string) (Edges, error) {
	for e, name := range edgesNames {
		if s == name {
			return Edges(e), nil
		}
	}
	return 0, fmt.Errorf("late: edges %q: want segment or none: %w", s, ErrConfig)
}

// Apply drops the edge rows from pieces under EdgesNone.
func (e Edges) Apply(pieces []Piece) {
	if e != EdgesNone {
		return
	}
	for i := range pieces {
		pieces[i].Lead, pieces[i].Trail = false, false
	}
}
