package late

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/embed"
)

func sp(a, b int) chunk.Span { return chunk.Span{Start: a, End: b} }

func TestSegments(t *testing.T) {
	for _, tc := range []struct {
		n, size, overlap int
		want             []chunk.Span
	}{
		{0, 10, 2, []chunk.Span{sp(0, 0)}},
		{7, 10, 2, []chunk.Span{sp(0, 7)}},
		{10, 10, 2, []chunk.Span{sp(0, 10)}},
		{11, 10, 2, []chunk.Span{sp(0, 10), sp(1, 11)}},
		{18, 10, 2, []chunk.Span{sp(0, 10), sp(8, 18)}},
		{19, 10, 2, []chunk.Span{sp(0, 10), sp(8, 18), sp(9, 19)}},
		{30, 10, 0, []chunk.Span{sp(0, 10), sp(10, 20), sp(20, 30)}},
		{25, 10, 5, []chunk.Span{sp(0, 10), sp(5, 15), sp(10, 20), sp(15, 25)}},
	} {
		got := Segments(nil, tc.n, tc.size, tc.overlap)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Segments(%d, %d, %d) = %v, want %v", tc.n, tc.size, tc.overlap, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ size, overlap int }{{0, 0}, {10, -1}, {10, 6}, {10, 9}, {10, 10}, {10, 11}, {254, 253}} {
		if err := Check(tc.size, tc.overlap); !errors.Is(err, ErrConfig) {
			t.Errorf("Check(%d, %d) = %v, want ErrConfig", tc.size, tc.overlap, err)
		}
	}
	for _, tc := range []struct{ size, overlap int }{{1, 0}, {10, 5}, {11, 5}, {508, DefaultOverlap(508)}, {508, 254}} {
		if err := Check(tc.size, tc.overlap); err != nil {
			t.Errorf("Check(%d, %d) = %v", tc.size, tc.overlap, err)
		}
	}
}

func TestPieces(t *testing.T) {
	// Segments of 10 tokens sharing 4 over 22 tokens: [0,10) [6,16) [12,22).
	segs := Segments(nil, 22, 10, 4)
	if want := []chunk.Span{sp(0, 10), sp(6, 16), sp(12, 22)}; !slices.Equal(segs, want) {
		t.Fatalf("segments %v, want %v", segs, want)
	}
	for _, tc := range []struct {
		w    chunk.Span
		want []Piece
	}{
		// Held by the first segment only; it starts there.
		{sp(0, 4), []Piece{{Seg: 0, Tokens: sp(0, 4), Lead: true}}},
		// Held by [0,10) with context 2 and 2, and by [6,16) with 0: the first.
		{sp(6, 8), []Piece{{Seg: 0, Tokens: sp(6, 8)}}},
		// Held by [0,10) (context 1) and [6,16) (context 2): the second.
		{sp(8, 9), []Piece{{Seg: 1, Tokens: sp(8, 9)}}},
		// A whole segment: both edges.
		{sp(6, 16), []Piece{{Seg: 1, Tokens: sp(6, 16), Lead: true, Trail: true}}},
		// Ends the document, held by the last only.
		{sp(18, 22), []Piece{{Seg: 2, Tokens: sp(18, 22), Trail: true}}},
		// Held by none: tokens 0-7 are best in [0,10) (token 7: context 2
		// there, 1 in [6,16)), 8-13 in [6,16), 14-19 in [12,22) (token 14:
		// 2 there, 1 in [6,16)).
		{sp(0, 20), []Piece{
			{Seg: 0, Tokens: sp(0, 8), Lead: true},
			{Seg: 1, Tokens: sp(8, 14)},
			{Seg: 2, Tokens: sp(14, 20)},
		}},
	} {
		got := Pieces(nil, segs, tc.w)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Pieces(%v) = %+v, want %+v", tc.w, got, tc.want)
		}
	}
}

func TestPiecesCoverEveryTokenOnce(t *testing.T) {
	for _, n := range []int{1, 9, 10, 11, 37, 100} {
		segs := Segments(nil, n, 10, 3)
		for size := 1; size <= 10; size++ {
			for start := 0; start < n; start += max(1, size/2) {
				w := sp(start, min(n, start+size))
				ps := Pieces(nil, segs, w)
				next := w.Start
				for _, p := range ps {
					s := segs[p.Seg]
					if p.Tokens.Start != next || p.Tokens.Len() <= 0 || p.Tokens.Start < s.Start || p.Tokens.End > s.End {
						t.Fatalf("n %d window %v: pieces %+v do not tile it within their segments %v", n, w, ps, segs)
					}
					next = p.Tokens.End
				}
				if next != w.End {
					t.Fatalf("n %d window %v: pieces %+v end at %d", n, w, ps, next)
				}
			}
		}
	}
}

// states makes the token states of a segment of content tokens with lead
// rows before and trail rows after; row r holds r+1 in every column.
func states(dims, lead, content, trail int) embed.TokenStates {
	n := lead + content + trail
	rows := make([]float32, n*dims)
	for r := range n {
		for k := range dims {
			rows[r*dims+k] = float32(r + 1)
		}
	}
	return embed.TokenStates{Rows: rows, Lead: lead, Content: content}
}

func TestAddAndMean(t *testing.T) {
	// A segment of document tokens [6,16) after 2 lead rows, with 1 trail row.
	st := states(3, 2, 10, 1)
	seg := sp(6, 16)
	for _, tc := range []struct {
		p     Piece
		count int
		sum   float32
	}{
		{Piece{Tokens: sp(8, 10)}, 2, 5 + 6},                            // rows 4, 5 (1-based values 5, 6)
		{Piece{Tokens: sp(6, 8), Lead: true}, 4, 1 + 2 + 3 + 4},         // lead rows and tokens 6, 7
		{Piece{Tokens: sp(15, 16), Trail: true}, 2, 12 + 13},            // last token and [SEP]
		{Piece{Tokens: sp(6, 16), Lead: true, Trail: true}, 13, 13 * 7}, // every row
	} {
		sum := make([]float32, 3)
		if n := Add(sum, st, seg, tc.p); n != tc.count || sum[0] != tc.sum || sum[2] != tc.sum {
			t.Errorf("Add(%+v) = %d rows, sum %v; want %d rows, sum %v", tc.p, n, sum, tc.count, tc.sum)
		}
	}
	v := []float32{2, 4, 4}
	Mean(v, 2, false)
	if !slices.Equal(v, []float32{1, 2, 2}) {
		t.Fatalf("Mean without normalizing = %v, want [1 2 2]", v)
	}
	Mean(v, 1, true)
	if math.Abs(float64(v[0])-1.0/3) > 1e-7 || math.Abs(float64(v[1])-2.0/3) > 1e-7 {
		t.Fatalf("Mean normalized = %v, want [1/3 2/3 2/3]", v)
	}
}

func TestEdges(t *testing.T) {
	for _, e := range []Edges{EdgesSegment, EdgesNone} {
		if got, err := ParseEdges(e.String()); err != nil || got != e {
			t.Errorf("ParseEdges(%q) = %v, %v", e, got, err)
		}
	}
	if _, err := ParseEdges("all"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseEdges(all): %v", err)
	}
	ps := []Piece{{Seg: 0, Tokens: sp(0, 4), Lead: true, Trail: true}}
	EdgesSegment.Apply(ps)
	if !ps[0].Lead || !ps[0].Trail {
		t.Errorf("EdgesSegment changed the piece: %+v", ps[0])
	}
	EdgesNone.Apply(ps)
	if ps[0].Lead || ps[0].Trail {
		t.Errorf("EdgesNone kept an edge: %+v", ps[0])
	}
}
