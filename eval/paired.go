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
	// PT is the two-sided p-value of the paired t-test of Diff
	// (PairedTTest); 1 for fewer than two queries.
	PT float64 `json:"p_t"`
	// PRandomization is the two-sided p-value of Fisher's randomization
	// test (Randomization): exact when RandomizationTrials is 0, else
	// estimated from that many random assignments of signs.
	PRandomization      float64 `json:"p_randomization"`
	RandomizationTrials int     `json:"randomization_trials,omitempty"`
	// PTHolm and PRandomizationHolm are PT and PRandomization adjusted
	// by Holm over the comparisons of one baseline with several runs
	// (AdjustHolm); nil when there was one comparison.
	PTHolm             *float64 `json:"p_t_holm,omitempty"`
	PRandomizationHolm *float64 `json:"p_randomization_holm,omitempty"`
}

// Resamples is the number of bootstrap resamplings in Compare.
const Resamples = 10000

// Compare pairs results a and b on metric over the queries both scored,
// with a bootstrap interval and the p-values of the paired t-test and of
// Fisher's randomization test. The bootstrap and the randomization draw
// with fixed seeds over the queries in sorted id order, so the interval
// and the p-values are the same on every run.
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
	p.PT = 1
	if len(d) > 1 {
		p.PT = PairedTTest(d)
	}
	var exact bool
	p.PRandomization, exact = Randomization(d, RandomizationTrials, 0x5eed)
	if !exact {
		p.RandomizationTrials = RandomizationTrials
	}
	return p, nil
}

// AdjustHolm sets the Holm-adjusted p-values of a family of comparisons
// (one baseline against several runs, on one metric: Holm); a family of
// one is left as it is.
func AdjustHolm(family []*Paired) {
	if len(family) < 2 {
		return
	}
	pt, pr := make([]float64, len(family)), make([]float64, len(family))
	for i, p := range family {
		pt[i], pr[i] = p.PT, p.PRandomization
	}
	pt, pr = Holm(pt), Holm(pr)
	for i, p := range family {
		p.PTHolm, p.PRandomizationHolm = &pt[i], &pr[i]
	}
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
