package eval

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Paired compares two configurations query by query on one metric.
type Paired struct {
	// Diff is the mean of a - b over the queries both score.
	Diff float64 `json:"diff"`
	// Lo and Hi bound the 95% paired bootstrap interval of Diff: the 2.5th
	// and 97.5th percentiles of the mean difference over Resamples
	// resamplings of the queries with replacement.
	Lo float64 `json:"ci_lo"`
	Hi float64 `json:"ci_hi"`
	// Wins, Ties and Losses count the queries where a is above, equal to
	// or below b.
	Wins   int `json:"wins"`
	Ties   int `json:"ties"`
	Losses int `json:"losses"`
	// Queries is the number of queries compared.
	Queries int `json:"queries"`
}

// Resamples is the number of bootstrap resamplings in Compare.
const Resamples = 10000

// Compare pairs results a and b on metric over the queries both scored. The
// bootstrap draws with a fixed seed over the queries in sorted id order, so
// the interval is the same on every run.
func Compare(a, b Results, metric string) (Paired, error) {
	var ids []string
	for id := range a.PerQuery {
		if _, ok := b.PerQuery[id]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return Paired{}, fmt.Errorf("%w: the results share no query", ErrMismatch)
	}
	slices.Sort(ids)
	d := make([]float64, len(ids))
	p := Paired{Queries: len(ids)}
	for i, id := range ids {
		va, oka := a.PerQuery[id][metric]
		vb, okb := b.PerQuery[id][metric]
		if !oka || !okb {
			return Paired{}, fmt.Errorf("%w: query %q lacks %s", ErrMismatch, id, metric)
		}
		d[i] = va - vb
		p.Diff += d[i]
		switch {
		case d[i] > 0:
			p.Wins++
		case d[i] < 0:
			p.Losses++
		default:
			p.Ties++
		}
	}
	p.Diff /= float64(len(d))
	p.Lo, p.Hi = bootstrap(d)
	return p, nil
}

// bootstrap returns the 2.5th and 97.5th percentiles of the mean of d over
// Resamples resamplings with replacement.
func bootstrap(d []float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(0x5eed, uint64(len(d))))
	means := make([]float64, Resamples)
	for r := range means {
		s := 0.0
		for range d {
			s += d[rng.IntN(len(d))]
		}
		means[r] = s / float64(len(d))
	}
	slices.Sort(means)
	return means[int(0.025*Resamples)], means[int(0.975*Resamples)-1]
}
