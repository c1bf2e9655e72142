package eval

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Significance tests of paired differences, one value per query (a - b on
// one metric), as ranx and scipy compute them:
//
//   - [PairedTTest]: Student's paired t-test, two-sided (scipy's
//     ttest_rel, ranx's "student").
//   - [Randomization]: Fisher's randomization test, two-sided (ranx's
//     "fisher"): under the null hypothesis each query's two scores are
//     exchangeable, so each difference keeps or flips its sign with
//     probability 1/2. Exact over every assignment of signs for up to
//     [ExactRandomization] queries, else estimated from random ones.
//   - [Holm]: Holm's step-down adjustment of a family of p-values (one
//     baseline against several runs).

// ExactRandomization is the most queries Randomization enumerates every
// assignment of signs for (2^n of them, counted half against half); above
// it, it draws random ones.
const ExactRandomization = 30

// RandomizationTrials is the number of random assignments of signs
// Randomization draws for more than ExactRandomization queries in Compare.
const RandomizationTrials = 10000

// PairedTTest returns the two-sided p-value of Student's paired t-test that
// the differences d have mean 0: t = mean / (s / sqrt(n)), s the sample
// standard deviation, n - 1 degrees of freedom. When every difference is
// equal, s is 0: p is 1 when they are 0 and 0 otherwise (scipy gives NaN
// and 0). NaN for fewer than two differences.
func PairedTTest(d []float64) float64 {
	n := float64(len(d))
	if len(d) < 2 {
		return math.NaN()
	}
	mean := 0.0
	for _, v := range d {
		mean += v
	}
	mean /= n
	ss := 0.0
	for _, v := range d {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	switch {
	case sd == 0 && mean == 0:
		return 1
	case sd == 0:
		return 0
	}
	t := mean / (sd / math.Sqrt(n))
	df := n - 1
	// P(|T| >= |t|) = I_{df/(df+t^2)}(df/2, 1/2).
	return regIncBeta(df/2, 0.5, df/(df+t*t))
}

// Randomization returns the two-sided p-value of Fisher's randomization
// test of the differences d: the share of the assignments of signs to them
// whose sum is at least as far from 0 as d's own sum (a sum within
// 1e-12 x the sum of |d| of it counts as reaching it, so that sums equal but
// for rounding do). Up to ExactRandomization differences every assignment
// is counted and exact is true; otherwise trials assignments are drawn
// with a generator seeded by seed, and p is (hits + 1) / (trials + 1),
// never 0 (ranx's estimate is hits / trials). NaN for no difference.
func Randomization(d []float64, trials int, seed uint64) (p float64, exact bool) {
	if len(d) == 0 {
		return math.NaN(), true
	}
	obs, tol := 0.0, 0.0
	for _, v := range d {
		obs += v
		tol += math.Abs(v)
	}
	obs = math.Abs(obs)
	tol *= 1e-12
	if len(d) <= ExactRandomization {
		return exactRandomization(d, obs-tol), true
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(d))))
	hits := 0
	for range trials {
		s := 0.0
		for _, v := range d {
			if rng.Uint64()&1 == 1 {
				s -= v
			} else {
				s += v
			}
		}
		if math.Abs(s) >= obs-tol {
			hits++
		}
	}
	return float64(hits+1) / float64(trials+1), false
}

// exactRandomization counts, over every assignment of signs to d, those
// whose |sum| is at least reach: the sums of each half's assignments are
// listed, one half's sorted, and for each sum a of the other the sums b
// with a + b >= reach or a + b <= -reach are counted by binary search.
func exactRandomization(d []float64, reach float64) float64 {
	if reach <= 0 {
		return 1 // every sum reaches a sum of 0
	}
	h := len(d) / 2
	left, right := signedSums(d[:h]), signedSums(d[h:])
	slices.Sort(right)
	var hits int64
	for _, a := range left {
		hits += int64(len(right) - sort.SearchFloat64s(right, reach-a)) // b >= reach - a
		lim := -reach - a                                               // b <= -reach - a
		hits += int64(sort.Search(len(right), func(i int) bool { return right[i] > lim }))
	}
	return float64(hits) / float64(len(left)*len(right))
}

// signedSums returns the sum of d under every assignment of signs, 2^len(d)
// of them; each is added in the order of d.
func signedSums(d []float64) []float64 {
	out := make([]float64, 1<<len(d))
	for m := range out {
		s := 0.0
		for i, v := range d {
			if m>>i&1 == 1 {
				s -= v
			} else {
				s += v
			}
		}
		out[m] = s
	}
	return out
}

// Holm returns Holm's step-down adjustment of the p-values of one family
// of tests, each in its place: with the m p-values in ascending order
// p(1) <= ... <= p(m), the adjusted p(i) is the largest of
// min(1, (m - j + 1) p(j)) over j <= i (statsmodels' multipletests with
// method "holm"). A NaN stays NaN and counts in m.
func Holm(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := p[a], p[b]
		switch {
		case math.IsNaN(pa) && math.IsNaN(pb):
			return 0
		case math.IsNaN(pa):
			return 1
		case math.IsNaN(pb):
			return -1
		}
		return cmpFloat(pa, pb)
	})
	out := make([]float64, m)
	run := 0.0
	for rank, i := range order {
		if math.IsNaN(p[i]) {
			out[i] = math.NaN()
			continue
		}
		run = max(run, min(1, float64(m-rank)*p[i]))
		out[i] = run
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (DLMF 8.17.22) evaluated with the modified Lentz
// method, on the side of x where it converges fast (I_x(a, b) =
// 1 - I_{1-x}(b, a)).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	case x > (a+1)/(a+b+2):
		return 1 - regIncBeta(b, a, 1-x)
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	return front * betaFraction(a, b, x) / a
}

// betaFraction evaluates 1 / (1 + d1 / (1 + d2 / (1 + ...))), the
// continued fraction of I_x(a, b), with d(2m+1) = -(a+m)(a+b+m)x /
// ((a+2m)(a+2m+1)) and d(2m) = m(b-m)x / ((a+2m-1)(a+2m)).
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	guard := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c, dd := 1.0, 1/guard(1-(a+b)*x/(a+1))
	f := dd
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		for _, coef := range []float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			dd = 1 / guard(1+coef*dd)
			c = guard(1 + coef/c)
			f *= dd * c
		}
		if math.Abs(dd*c-1) < eps {
			break
		}
	}
	return f
}
