package fusion

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/fuse"
)

// Lists are every channel's ranked chunks for a batch of queries, their
// rows already mapped to documents: what a fusion reads ([Fuse]). One
// batch's Lists can be fused many ways without searching again.
type Lists struct {
	NQ     int
	Layout channel.Layout // the index's channels
	Hits   []fuse.Hits    // per channel; Docs are document indices, -1 for none
	// Start and End are the byte spans of the chunks, parallel to Hits[c].Docs.
	Start, End [][]int64
	// Queries holds the query vectors searched (NQ rows of Dims), which a
	// learned router reads.
	Queries []float32
	Dims    int
}

// NewLists returns empty lists of every channel of layout for nq queries.
func NewLists(layout channel.Layout, nq int) Lists {
	n := len(layout)
	return Lists{NQ: nq, Layout: layout, Hits: make([]fuse.Hits, n), Start: make([][]int64, n), End: make([][]int64, n)}
}

// Set makes h the lists of channel c.
func (l *Lists) Set(c int, h channel.Hits) {
	l.Hits[c] = fuse.Hits{K: h.K, Docs: h.Docs, Scores: h.Scores}
	l.Start[c], l.End[c] = h.Start, h.End
}

// Searched reports whether channel c was searched for the batch: its list
// of every query holds its k slots.
func (l *Lists) Searched(c int) bool {
	h := l.Hits[c]
	return l.NQ == 0 || h.K > 0 && len(h.Docs) == l.NQ*h.K
}

// Concat puts the lists of batches of queries one after the other: the
// lists of every query of parts, in order. The parts must have the same
// layout and lengths of lists.
func Concat(parts []*Lists) (*Lists, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("msrag: no chunk lists to put together")
	}
	out := &Lists{Layout: parts[0].Layout, Dims: parts[0].Dims}
	n := len(out.Layout)
	out.Hits, out.Start, out.End = make([]fuse.Hits, n), make([][]int64, n), make([][]int64, n)
	for _, p := range parts {
		if len(p.Layout) != n || p.Dims != out.Dims {
			return nil, fmt.Errorf("msrag: chunk lists of %d channels and %d dims put together with %d and %d", len(p.Layout), p.Dims, n, out.Dims)
		}
		out.NQ += p.NQ
		out.Queries = append(out.Queries, p.Queries...)
		for c := range n {
			h := &out.Hits[c]
			if p.NQ > 0 && h.K != 0 && h.K != p.Hits[c].K {
				return nil, fmt.Errorf("msrag: channel %s lists %d and %d chunks per query", out.Layout[c].Name(), h.K, p.Hits[c].K)
			}
			if p.NQ > 0 {
				h.K = p.Hits[c].K
			}
			h.Docs = append(h.Docs, p.Hits[c].Docs...)
			h.Scores = append(h.Scores, p.Hits[c].Scores...)
			out.Start[c] = append(out.Start[c], p.Start[c]...)
			out.End[c] = append(out.End[c], p.End[c]...)
		}
	}
	return out, nil
}

// Subset returns the lists of the queries idx (positions in l), in that
// order.
func (l *Lists) Subset(idx []int) *Lists {
	n := len(l.Layout)
	sub := &Lists{NQ: len(idx), Layout: l.Layout, Dims: l.Dims, Hits: make([]fuse.Hits, n), Start: make([][]int64, n), End: make([][]int64, n)}
	for c := range n {
		sub.Hits[c].K = l.Hits[c].K
	}
	for _, q := range idx {
		if l.Dims > 0 && len(l.Queries) > 0 {
			sub.Queries = append(sub.Queries, l.Queries[q*l.Dims:(q+1)*l.Dims]...)
		}
		for c := range n {
			k := l.Hits[c].K
			h := &sub.Hits[c]
			h.Docs = append(h.Docs, l.Hits[c].Docs[q*k:(q+1)*k]...)
			h.Scores = append(h.Scores, l.Hits[c].Scores[q*k:(q+1)*k]...)
			sub.Start[c] = append(sub.Start[c], l.Start[c][q*k:(q+1)*k]...)
			sub.End[c] = append(sub.End[c], l.End[c][q*k:(q+1)*k]...)
		}
	}
	return sub
}
