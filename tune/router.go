package tune

import (
	"fmt"
	"math/rand/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/fusion"
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
	// CV maps a penalty ("1e-3", ...) to the fit's objective (mean
	// nDCG@10 at loss aversion 0) of the rule weighted by routers fitted on
	// the other folds, over the held-out folds; "none" is the rule alone on
	// the same folds.
	CV     map[string]float64 `json:"cv"`
	Lambda float64            `json:"lambda"`
	// BeatsNone says whether the chosen router did better than none in
	// cross-validation.
	BeatsNone bool `json:"beats_none"`
}

// FitRouter fits a router of feature set fs for rule over the windows it
// fuses, with the penalty that k-fold cross-validation on ss finds best
// (each set dealt into the folds on its own; a penalty's score is the mean
// over the sets of their held-out means), and reports the choice. The
// router is fitted on every query of every set alike. A router of
// router.EmbeddingWindows over an index without a model has no query
// vectors to read: an error wrapping msrag.ErrNoModel.
func FitRouter(ss Sets, aversion float64, rule fusion.Fusion, windows []string, fs router.FeatureSet, folds int, seed uint64) (*router.Model, *RouterChoice, error) {
	if fs == router.EmbeddingWindows && !ss.HasModel() {
		return nil, nil, fmt.Errorf("tune: a router of feature set %s weighs the windows from the query's embedding, and an index has no model: %w", fs, msrag.ErrNoModel)
	}
	for _, s := range ss {
		if len(s.IDs) < 2*folds {
			return nil, nil, fmt.Errorf("tune: %d training queries are too few for %d-fold cross-validation (at least %d)", len(s.IDs), folds, 2*folds)
		}
	}
	obj, err := newObjective(ss, aversion)
	if err != nil {
		return nil, nil, err
	}
	x, y, err := routerData(ss, windows, fs)
	if err != nil {
		return nil, nil, err
	}
	inputs := len(x) / ss.Queries()
	fold := make([][]int, len(ss))
	for i, s := range ss {
		fold[i] = assignFolds(len(s.IDs), folds, seed)
	}
	ch := &RouterChoice{Folds: folds, CV: map[string]float64{}}
	none, err := cvScore(obj, rule, fold, folds, nil)
	if err != nil {
		return nil, nil, err
	}
	ch.CV["none"] = none
	var best float64
	for i, lam := range Lambdas {
		fit := func(train []int) (*router.Model, error) {
			return fitRouter(rows(x, train, inputs), inputs, rows(y, train, len(windows)), windows, lam, fs)
		}
		sc, err := cvScore(obj, rule, fold, folds, fit)
		if err != nil {
			return nil, nil, err
		}
		ch.CV[fmt.Sprintf("%g", lam)] = sc
		if i == 0 || sc > best { // scores below -1 where losses weigh much
			best, ch.Lambda = sc, lam
		}
	}
	ch.BeatsNone = best > none
	m, err := fitRouter(x, inputs, y, windows, ch.Lambda, fs)
	return m, ch, err
}

// fitRouter fits a router and records its feature set.
func fitRouter(x []float64, inputs int, y []float64, windows []string, lambda float64, fs router.FeatureSet) (*router.Model, error) {
	m, err := router.Fit(x, inputs, y, windows, lambda)
	if err == nil && fs != router.EmbeddingWindows {
		m.Features = fs
	}
	return m, err
}

// routerData builds the router's inputs (feature set fs) and soft targets
// for every query of ss, set after set.
func routerData(ss Sets, windows []string, fs router.FeatureSet) (x, y []float64, err error) {
	for _, s := range ss {
		n, nw := len(s.IDs), len(windows)
		per := make([]float64, n*nw)
		sel := make([]int, nw)
		for w, name := range windows {
			vals, _, err := s.Score(fusion.Single(name))
			if err != nil {
				return nil, nil, err
			}
			for q, v := range vals {
				per[q*nw+w] = v
			}
			sel[w] = s.Hits.Layout.Index(name)
		}
		in, err := fusion.RouterInputs(fs, s.Hits, sel)
		if err != nil {
			return nil, nil, fmt.Errorf("tune: %w", err)
		}
		x, y = append(x, in...), append(y, router.SoftTargets(per, nw, TargetTemperature)...)
	}
	return x, y, nil
}

// cvScore is the objective over held-out folds of rule weighted by a
// router fitted on the other folds of every set (fit nil: the rule alone). fold[i][q] is query q of set i's fold; fit
// takes rows numbered over all sets, set after set.
func cvScore(obj *objective, rule fusion.Fusion, fold [][]int, folds int, fit func([]int) (*router.Model, error)) (float64, error) {
	ss := obj.ss
	totals := make([]float64, len(ss))
	for f := range folds {
		var train []int
		test := make([][]int, len(ss))
		base := 0
		for i := range ss {
			for q, g := range fold[i] {
				if g == f {
					test[i] = append(test[i], q)
				} else {
					train = append(train, base+q)
				}
			}
			base += len(fold[i])
		}
		r := rule
		if fit != nil {
			m, err := fit(train)
			if err != nil {
				return 0, err
			}
			r.Router = m
		}
		for i, s := range ss {
			if len(test[i]) == 0 {
				continue
			}
			per, _, err := s.Subset(test[i]).Score(r)
			if err != nil {
				return 0, err
			}
			for j, v := range per {
				totals[i] += obj.value(i, test[i][j], v)
			}
		}
	}
	mean := 0.0
	for i, s := range ss {
		mean += totals[i] / float64(len(s.IDs))
	}
	return mean / float64(len(ss)), nil
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
