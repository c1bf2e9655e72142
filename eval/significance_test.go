package eval_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// compareGolden is a set of testdata/compare/SET.golden.json, written by
// scripts/gen_compare_golden.py with ranx, pytrec_eval and statsmodels.
type compareGolden struct {
	Runs          []string `json:"runs"`
	Metric        string   `json:"metric"`
	NPermutations int      `json:"n_permutations"`
	Metrics       map[string]map[string]struct {
		Mean     float64 `json:"mean"`
		RanxMean float64 `json:"ranx_mean"`
	} `json:"metrics"`
	Compare map[string]struct {
		PT              float64  `json:"p_t"`
		PFisherRanx     float64  `json:"p_fisher_ranx"`
		PFisherExact    *float64 `json:"p_fisher_exact"`
		PTHolm          *float64 `json:"p_t_holm"`
		PFisherRanxHolm *float64 `json:"p_fisher_ranx_holm"`
	} `json:"compare"`
}

// readCompareSet reads a set's judgements, runs and golden values.
func readCompareSet(t *testing.T, set string) (eval.Qrels, map[string]eval.Run, compareGolden) {
	t.Helper()
	dir := filepath.Join("testdata", "compare")
	var g compareGolden
	b, err := os.ReadFile(filepath.Join(dir, set+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	rows, err := corpus.ReadQrels(filepath.Join(dir, set, "qrels.tsv"), corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]eval.Run{}
	for _, name := range g.Runs {
		if runs[name], err = eval.ReadRunFile(filepath.Join(dir, set, name+".trec")); err != nil {
			t.Fatal(err)
		}
	}
	return eval.Qrels(corpus.Judgements(rows)), runs, g
}

// montecarloTol is how far two estimates of a p-value p, each from trials
// random assignments, may lie apart: four standard errors of their
// difference, and 2/trials for msrag's (hits+1)/(trials+1) against ranx's
// hits/trials.
func montecarloTol(p float64, trials int) float64 {
	return 4*math.Sqrt(max(p*(1-p), 1/float64(trials))*2/float64(trials)) + 2/float64(trials)
}

// TestCompareAgreesWithRanx: on runs made by the script (12 and 200
// queries, distinct scores) and on msrag's own runs (sf40), every metric's
// mean agrees with pytrec_eval's and ranx's to 1e-6, the paired t-test's
// p-value with ranx's (scipy's) to 1e-9, the randomization test's with the
// exact one enumerated in Python to 1e-12 (up to 30 queries: exact here
// too) or with ranx's within Monte Carlo error (10000 assignments each),
// and Holm's adjustment with statsmodels' to 1e-12.
func TestCompareAgreesWithRanx(t *testing.T) {
	for _, set := range []string{"small", "large", "sf40"} {
		t.Run(set, func(t *testing.T) {
			qrels, runs, g := readCompareSet(t, set)
			res := map[string]eval.Results{}
			var worstMetric, worstT, worstExact, worstMC float64
			defer func() {
				t.Logf("largest differences: metric means %.2g, t-test p %.2g, exact randomization p %.2g, drawn against ranx %.2g", worstMetric, worstT, worstExact, worstMC)
			}()
			for _, name := range g.Runs {
				var metrics []string
				for m := range g.Metrics[name] {
					metrics = append(metrics, m)
				}
				slices.Sort(metrics)
				r, err := eval.Evaluate(qrels, runs[name], metrics...)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range metrics {
					want := g.Metrics[name][m]
					d := math.Max(math.Abs(r.Mean[m]-want.Mean), math.Abs(r.Mean[m]-want.RanxMean))
					worstMetric = max(worstMetric, d)
					if d > 1e-6 {
						t.Errorf("%s %s: mean %.9f, pytrec_eval %.9f, ranx %.9f", name, m, r.Mean[m], want.Mean, want.RanxMean)
					}
				}
				res[name] = r
			}
			base := g.Runs[0]
			var family []*eval.Paired
			for _, name := range g.Runs[1:] {
				p, err := eval.Compare(res[base], res[name], g.Metric)
				if err != nil {
					t.Fatal(err)
				}
				want := g.Compare[name]
				worstT = max(worstT, math.Abs(p.PT-want.PT))
				if math.Abs(p.PT-want.PT) > 1e-9 {
					t.Errorf("%s against %s: t-test p %.12g, ranx (scipy) %.12g", base, name, p.PT, want.PT)
				}
				switch {
				case p.RandomizationTrials == 0 && want.PFisherExact != nil:
					worstExact = max(worstExact, math.Abs(p.PRandomization-*want.PFisherExact))
					if math.Abs(p.PRandomization-*want.PFisherExact) > 1e-12 {
						t.Errorf("%s against %s: exact randomization p %.12g, enumerated in Python %.12g", base, name, p.PRandomization, *want.PFisherExact)
					}
				case p.RandomizationTrials == 0:
					t.Errorf("%s against %s: %d queries, exact randomization but no exact golden", base, name, p.Queries)
				}
				worstMC = max(worstMC, math.Abs(p.PRandomization-want.PFisherRanx))
				if tol := montecarloTol(want.PFisherRanx, g.NPermutations); math.Abs(p.PRandomization-want.PFisherRanx) > tol {
					t.Errorf("%s against %s: randomization p %.6g, ranx %.6g (tolerance %.3g)", base, name, p.PRandomization, want.PFisherRanx, tol)
				}
				family = append(family, &p)
			}
			eval.AdjustHolm(family)
			var pt, pf, wantT, wantF []float64
			for i, name := range g.Runs[1:] {
				want := g.Compare[name]
				if want.PTHolm == nil {
					continue
				}
				if math.Abs(*family[i].PTHolm-*want.PTHolm) > 1e-9 {
					t.Errorf("%s: Holm-adjusted t-test p %.12g, statsmodels %.12g", name, *family[i].PTHolm, *want.PTHolm)
				}
				pt, pf = append(pt, want.PT), append(pf, want.PFisherRanx)
				wantT, wantF = append(wantT, *want.PTHolm), append(wantF, *want.PFisherRanxHolm)
			}
			for i, v := range eval.Holm(pt) {
				if math.Abs(v-wantT[i]) > 1e-12 {
					t.Errorf("Holm(%v)[%d] = %.15g, statsmodels %.15g", pt, i, v, wantT[i])
				}
			}
			for i, v := range eval.Holm(pf) {
				if math.Abs(v-wantF[i]) > 1e-12 {
					t.Errorf("Holm(%v)[%d] = %.15g, statsmodels %.15g", pf, i, v, wantF[i])
				}
			}
		})
	}
}

// TestRandomizationExactAgainstDrawn: for 30 queries, the exact test and
// the estimate from random assignments agree within Monte Carlo error, and
// the edge cases are what the documentation says.
func TestRandomizationExactAgainstDrawn(t *testing.T) {
	d := make([]float64, eval.ExactRandomization)
	for i := range d {
		d[i] = math.Sin(float64(i)*1.7) + 0.25
	}
	exact, ok := eval.Randomization(d, 0, 1)
	drawn, ok2 := eval.Randomization(append(slices.Clone(d), 0), 20000, 1) // a 0 changes no sum
	if !ok || ok2 || math.Abs(exact-drawn) > montecarloTol(exact, 20000) {
		t.Errorf("exact %v (%v), drawn %v (%v)", exact, ok, drawn, ok2)
	}
	if p, _ := eval.Randomization([]float64{0, 0, 0}, 0, 1); p != 1 {
		t.Errorf("all differences 0: p %v, want 1", p)
	}
	if p, _ := eval.Randomization([]float64{1, 1, 1}, 0, 1); p != 0.25 {
		t.Errorf("three equal differences: p %v, want 2/8", p)
	}
	if p := eval.PairedTTest([]float64{0.5, 0.5}); p != 0 {
		t.Errorf("equal differences not 0: p %v, want 0", p)
	}
	if p := eval.PairedTTest([]float64{0, 0}); p != 1 {
		t.Errorf("zero differences: p %v, want 1", p)
	}
}
