package tune

import (
	"fmt"
	"math/rand/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fuse"
	"github.com/msrag/msrag/router"
)

// Lambdas are the L2 penalties cross-validation chooses from.
var Lambdas = []float64{1e-3, 1e-2, 1e-1, 1}

// TargetTemperature turns a query's per-window nDCG@10 into the router's
// soft target: softmax(nDCG@10 / 0.1) over the windows.
const TargetTemperature = 0.1

// RouterChoice records how the router's penalty was chosen.
type RouterChoice struct {
	Folds int `json:"folds"`
	// CV maps a penalty ("1e-3", ...) to the mean nDCG@10 of the rule
	// weighted by routers fitted on the other folds, over the held-out
	// folds; "none" is the rule alone on the same folds.
	CV     map[string]float64 `json:"cv"`
	Lambda float64            `json:"lambda"`
	// BeatsNone says whether the chosen router did better than none in
	// cross-validation.
	BeatsNone bool `json:"beats_none"`
}

// FitRouter fits a router for rule over the windows it fuses, with the
// penalty that k-fold cross-validation on s finds best, and reports the
// choice. An index without dense windows has no query vectors for it: an
// error wrapping msrag.ErrNoDense.
func FitRouter(ix *msrag.Index, s *Set, rule msrag.Fusion, windows []string, folds int, seed uint64) (*router.Model, *RouterChoice, error) {
	if !ix.Dense() {
		return nil, nil, fmt.Errorf("tune: a router weighs the windows from the query's embedding, and index %s has no dense windows (built with no model): %w", ix.Dir(), msrag.ErrNoDense)
	}
	if len(s.IDs) < 2*folds {
		return nil, nil, fmt.Errorf("tune: %d training queries are too few for %d-fold cross-validation (at least %d)", len(s.IDs), folds, 2*folds)
	}
	x, y, err := routerData(ix, s, windows)
	if err != nil {
		return nil, nil, err
	}
	ch := &RouterChoice{Folds: folds, CV: map[string]float64{}}
	fold := assignFolds(len(s.IDs), folds, seed)
	none, err := cvScore(ix, s, rule, fold, folds, nil)
	if err != nil {
		return nil, nil, err
	}
	ch.CV["none"] = none
	best := -1.0
	for _, lam := range Lambdas {
		fit := func(train []int) (*router.Model, error) {
			return router.Fit(rows(x, train, len(x)/len(s.IDs)), len(x)/len(s.IDs), rows(y, train, len(windows)), windows, lam)
		}
		sc, err := cvScore(ix, s, rule, fold, folds, fit)
		if err != nil {
			return nil, nil, err
		}
		ch.CV[fmt.Sprintf("%g", lam)] = sc
		if sc > best {
			best, ch.Lambda = sc, lam
		}
	}
	ch.BeatsNone = best > none
	m, err := router.Fit(x, len(x)/len(s.IDs), y, windows, ch.Lambda)
	return m, ch, err
}

// routerData builds the router's inputs and soft targets for s.
func routerData(ix *msrag.Index, s *Set, windows []string) (x, y []float64, err error) {
	n, nw := len(s.IDs), len(windows)
	per := make([]float64, n*nw)
	for w, name := range windows {
		vals, _, err := s.Score(ix, msrag.Single(name))
		if err != nil {
			return nil, nil, err
		}
		for q, v := range vals {
			per[q*nw+w] = v
		}
	}
	hits := make([]fuse.Hits, nw)
	for w, name := range windows {
		for i, win := range s.Hits.Layout {
			if win.Name() == name {
				hits[w] = s.Hits.Hits[i]
			}
		}
	}
	feats, err := fuse.Features(hits)
	if err != nil {
		return nil, nil, err
	}
	x, err = router.Inputs(s.Hits.Queries, s.Hits.Dims, feats, nw, fuse.NumFeatures)
	return x, router.SoftTargets(per, nw, TargetTemperature), err
}

// cvScore is the mean nDCG@10 over held-out folds of rule weighted by a
// router fitted on the other folds (fit nil: the rule alone).
func cvScore(ix *msrag.Index, s *Set, rule msrag.Fusion, fold []int, folds int, fit func([]int) (*router.Model, error)) (float64, error) {
	total := 0.0
	for f := range folds {
		var train, test []int
		for q, g := range fold {
			if g == f {
				test = append(test, q)
			} else {
				train = append(train, q)
			}
		}
		r := rule
		if fit != nil {
			m, err := fit(train)
			if err != nil {
				return 0, err
			}
			r.Router = m
		}
		per, _, err := s.Subset(test).Score(ix, r)
		if err != nil {
			return 0, err
		}
		for _, v := range per {
			total += v
		}
	}
	return total / float64(len(fold)), nil
}

// assignFolds gives each of n queries a fold, a seeded shuffle dealt round
// robin.
func assignFolds(n, folds int, seed uint64) []int {
	perm := rand.New(rand.NewPCG(seed, 0x6d73)).Perm(n)
	out := make([]int, n)
	for i, q := range perm {
		out[q] = i % folds
	}
	return out
}

// rows gathers rows idx of a row-major matrix of width w.
func rows(m []float64, idx []int, w int) []float64 {
	out := make([]float64, 0, len(idx)*w)
	for _, i := range idx {
		out = append(out, m[i*w:(i+1)*w]...)
	}
	return out
}
