package msrag

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/fuse"
)

// CheckFusion fails unless every window f fuses or weighs is a window of the
// index, so that a search can be refused before any query is embedded.
func (ix *Index) CheckFusion(f Fusion) error {
	_, err := fusedWindows(ix.Windows(), f)
	return err
}

// fusedWindows returns the positions, among windows, of the windows f fuses.
func fusedWindows(windows []chunk.Window, f Fusion) ([]int, error) {
	names := mapSlice(windows, chunk.Window.Name)
	var sel []int
	if len(f.Windows) == 0 {
		for i, w := range windows {
			if !w.Truncate {
				sel = append(sel, i)
			}
		}
		if len(sel) == 0 {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no sliding window", f)
		}
	}
	for _, w := range f.Windows {
		i := slices.Index(names, w)
		if i < 0 {
			return nil, fmt.Errorf("msrag: fusion %s: the index has no window %s (it has %s)", f, w, strings.Join(names, ", "))
		}
		sel = append(sel, i)
	}
	for w := range f.Weights {
		if !slices.ContainsFunc(sel, func(i int) bool { return names[i] == w }) {
			return nil, fmt.Errorf("msrag: fusion %s: weight for window %s, which it does not fuse", f, w)
		}
	}
	return sel, nil
}

// Fuse turns per-window chunk hits into document rankings with opts.Fusion.
func (ix *Index) Fuse(ch *ChunkHits, opts SearchOptions) ([][]Hit, error) {
	opts = opts.withDefaults()
	f := opts.Fusion
	sel, err := fusedWindows(ch.Windows, f)
	if err != nil {
		return nil, err
	}
	hits := make([]fuse.Hits, len(sel))
	for i, wi := range sel {
		hits[i] = ch.Hits[wi]
	}
	fo := fuse.Options{K: opts.K, C: f.C, RankBase: f.RankBase, Cap: f.Cap, Norm: f.Norm, Workers: 2}
	if len(f.Weights) > 0 {
		fo.Weights = make([]float64, len(sel))
		for i, wi := range sel {
			fo.Weights[i] = 1
			if v, ok := f.Weights[ch.Windows[wi].Name()]; ok {
				fo.Weights[i] = v
			}
		}
	}
	rk, err := fuse.Fuse(f.Method, hits, ix.NumDocs(), fo)
	if err != nil {
		return nil, fmt.Errorf("msrag: fusion %s: %w", f, err)
	}
	return ix.hitsOf(ch, sel, rk), nil
}

// hitsOf turns a fused ranking into Hits with their evidence.
func (ix *Index) hitsOf(ch *ChunkHits, sel []int, rk *fuse.Ranking) [][]Hit {
	out := make([][]Hit, ch.NQ)
	for q := range ch.NQ {
		docs, scores := rk.Query(q)
		row := make([]Hit, 0, len(docs))
		for r, d := range docs {
			ev := rk.EvidenceOf(q, r)
			evs := make([]Evidence, len(ev))
			for j, e := range ev {
				wi := sel[e.Window]
				p := q*ch.Hits[wi].K + int(e.Pos)
				evs[j] = Evidence{Window: ch.Windows[wi], ChunkRank: int(e.Rank) + 1, ChunkScore: e.Score,
					Start: ch.Start[wi][p], End: ch.End[wi][p]}
			}
			row = append(row, Hit{DocID: ix.DocID(int(d)), Doc: int(d), Score: scores[r], Rank: r + 1, Evidence: evs})
		}
		out[q] = row
	}
	return out
}
