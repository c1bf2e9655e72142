package tune

import (
	"fmt"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fusion"
)

// Sets are the training queries of one or more datasets, each searched in
// its own index of the dataset's corpus. A fit maximises the mean over the
// sets of each set's mean nDCG@10, so that every dataset counts the same
// however many queries it has.
type Sets []*Set

// Check fails unless there is a set and the sets' indices agree
// (CheckIndices).
func (ss Sets) Check() error {
	if len(ss) == 0 {
		return fmt.Errorf("tune: no training queries")
	}
	ixs := make([]msrag.Searcher, len(ss))
	for i, s := range ss {
		ixs[i] = s.Index
	}
	return CheckIndices(ixs)
}

// CheckIndices fails unless every index is of the first one's embedding
// model and channels (the same windows, stride, tail and kinds'
// parameters): one rule's coefficients name the channels, and a router
// reads the same features of each. It reads only the manifests, so that a
// fit over indices that disagree is refused before any search.
func CheckIndices(ixs []msrag.Searcher) error {
	for _, ix := range ixs[1:] {
		first := ixs[0]
		if a, b := first.Manifest().Model, ix.Manifest().Model; !a.SameModel(b) {
			return fmt.Errorf("tune: index %s is of model %s (sha256 %s), index %s of %s (sha256 %s): one fit takes indices of one model: %w",
				first.Dir(), a.Name, a.ModelSHA256, ix.Dir(), b.Name, b.ModelSHA256, msrag.ErrIndexMismatch)
		}
		if d := first.Layout().Diff(ix.Layout()); !d.Same() {
			return fmt.Errorf("tune: index %s has channels %s, index %s %s: one fit takes indices of one set of windows: %w",
				first.Dir(), first.Layout(), ix.Dir(), ix.Layout(), msrag.ErrIndexMismatch)
		}
	}
	return nil
}

// Score returns each set's per-query nDCG@10 under f, in the order of its
// IDs, and the mean over the sets of their means.
func (ss Sets) Score(f fusion.Fusion) ([][]float64, float64, error) {
	per := make([][]float64, len(ss))
	total := 0.0
	for i, s := range ss {
		p, mean, err := s.Score(f)
		if err != nil {
			return nil, 0, err
		}
		per[i], total = p, total+mean
	}
	return per, total / float64(len(ss)), nil
}

// Queries is the number of queries of all sets.
func (ss Sets) Queries() int {
	n := 0
	for _, s := range ss {
		n += len(s.IDs)
	}
	return n
}

// HasModel reports whether every set's index has a model.
func (ss Sets) HasModel() bool {
	for _, s := range ss {
		if s.Index.Manifest().Model.None() {
			return false
		}
	}
	return true
}
