package fuse

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rule is a fusion rule with its own parameters: the method and how it
// scores and weighs, but not which windows it fuses nor their weights (the
// caller's, by position in [Options]). The zero value is RRF with C 1,
// ranks from 0 and every chunk voting. [Rule.Validate] is the one check of
// a rule's parameters; [Fuse] applies its range checks to [Options] too.
//
// A rule has a text form, METHOD:PARAM=VALUE,... ([Rule.Set] reads one
// parameter, [Rule.Format] writes the rule):
//
//	c=1  base=0      RRF constant and rank of a list's top entry (rrf, docrrf)
//	cap=3            most chunks of a document counted per window (rrf)
//	norm=minmax      none, minmax or zscore (combsum, combmnz)
//	adapt=top:0.03   per-query window weights from a feature (top, gap,
//	                 entropy, agree) at a temperature (not maxp)
type Rule struct {
	Method Method
	// C is the RRF constant (0 means 1) and RankBase the rank of a list's
	// top entry; RRF and DocRRF. Neither is negative.
	C        float64
	RankBase int
	// Cap is the most chunks of a document that vote per window; 0: all.
	// RRF only.
	Cap int
	// Norm normalises per-window document scores; CombSUM and CombMNZ.
	Norm Norm
	// Adapt, when set, weighs windows per query by a label-free feature of
	// their lists ([AdaptiveWeights]); not with MaxP.
	Adapt *Adapt
}

// Adapt is a query-adaptive weighting: window weights nw * softmax of one
// feature ([Features]) over temperature T.
type Adapt struct {
	Feature int
	T       float64
}

// RuleParams names the parameters [Rule.Set] reads, in the order
// [Rule.Format] writes them.
var RuleParams = []string{"c", "base", "cap", "norm", "adapt"}

// TakesWeights reports whether the method weighs its windows (static,
// per-query or learned weights); MaxP does not.
func (m Method) TakesWeights() bool { return m != MethodMaxP }

// rankRule reports whether m scores by 1/(rank + base + c).
func (m Method) rankRule() bool { return m == MethodRRF || m == MethodDocRRF }

// ValidWeight reports whether v may weigh a window: finite and not
// negative.
func ValidWeight(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// Validate checks that r's parameters fit its method and are in range.
func (r Rule) Validate() error {
	m := r.Method
	switch {
	case !m.rankRule() && (r.C != 0 || r.RankBase != 0):
		return fmt.Errorf("%w: c and base are parameters of rrf and docrrf, not %s", ErrOptions, m)
	case r.Cap != 0 && m != MethodRRF:
		return fmt.Errorf("%w: cap is a parameter of rrf, not %s", ErrOptions, m)
	case r.Norm != NormNone && m != MethodCombSUM && m != MethodCombMNZ:
		return fmt.Errorf("%w: norm is a parameter of combsum and combmnz, not %s", ErrOptions, m)
	case r.Adapt != nil && !m.TakesWeights():
		return fmt.Errorf("%w: %s takes no weights", ErrOptions, m)
	}
	return r.checkRange()
}

// checkRange checks r's parameters against their ranges, whatever the
// method uses: the checks [Options] shares.
func (r Rule) checkRange() error {
	switch {
	case r.Method < 0 || r.Method >= numMethods:
		return fmt.Errorf("%w: unknown method %d", ErrOptions, int(r.Method))
	case r.Norm < 0 || r.Norm >= numNorms:
		return fmt.Errorf("%w: unknown normalisation %d", ErrOptions, int(r.Norm))
	case r.C < 0 || math.IsNaN(r.C) || math.IsInf(r.C, 0) || r.RankBase < 0:
		return fmt.Errorf("%w: c %v and base %d must not be negative, and c finite: the %s term is 1/(rank+base+c)", ErrOptions, r.C, r.RankBase, r.Method)
	case r.Cap < 0:
		return fmt.Errorf("%w: cap %d must not be negative", ErrOptions, r.Cap)
	}
	if a := r.Adapt; a != nil {
		switch {
		case a.Feature < 0 || a.Feature >= NumFeatures:
			return fmt.Errorf("%w: unknown feature %d", ErrOptions, a.Feature)
		case !(a.T > 0) || math.IsInf(a.T, 1):
			return fmt.Errorf("%w: temperature %v must be a positive number", ErrOptions, a.T)
		}
	}
	return nil
}

// Set applies one parameter of the text form, key=val. It reports false,
// leaving r as it is, when key is not one of [RuleParams] (a caller's
// parameter, such as the windows).
func (r *Rule) Set(key, val string) (bool, error) {
	var err error
	switch key {
	case "c":
		r.C, err = strconv.ParseFloat(val, 64)
	case "base":
		r.RankBase, err = strconv.Atoi(val)
	case "cap":
		r.Cap, err = strconv.Atoi(val)
	case "norm":
		r.Norm, err = ParseNorm(val)
	case "adapt":
		r.Adapt, err = parseAdapt(val)
	default:
		return false, nil
	}
	return true, err
}

// parseAdapt parses FEATURE:TEMPERATURE.
func parseAdapt(s string) (*Adapt, error) {
	name, ts, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("want FEATURE:TEMPERATURE, such as top:0.03")
	}
	f, err := ParseFeature(name)
	if err != nil {
		return nil, err
	}
	t, err := strconv.ParseFloat(ts, 64)
	if err != nil || !(t > 0) || math.IsInf(t, 1) {
		return nil, fmt.Errorf("temperature %q must be a positive number", ts)
	}
	return &Adapt{Feature: f, T: t}, nil
}

// Format writes the rule in its text form, parameters in a fixed order and
// only where they differ from the defaults: the method, its scoring
// parameters, then the caller's (the windows and their weights, already
// written as NAME=VALUE), then the query weighting.
func (r Rule) Format(caller []string) string {
	var p []string
	if r.C != 0 && r.C != 1 {
		p = append(p, "c="+strconv.FormatFloat(r.C, 'g', -1, 64))
	}
	if r.RankBase != 0 {
		p = append(p, "base="+strconv.Itoa(r.RankBase))
	}
	if r.Cap != 0 {
		p = append(p, "cap="+strconv.Itoa(r.Cap))
	}
	if r.Norm != NormNone {
		p = append(p, "norm="+r.Norm.String())
	}
	p = append(p, caller...)
	if r.Adapt != nil {
		p = append(p, "adapt="+FeatureName(r.Adapt.Feature)+":"+strconv.FormatFloat(r.Adapt.T, 'g', -1, 64))
	}
	s := r.Method.String()
	if len(p) > 0 {
		s += ":" + strings.Join(p, ",")
	}
	return s
}

// String writes the rule alone, as [Rule.Format] does.
func (r Rule) String() string { return r.Format(nil) }

// Options returns fuse's options for r with k documents per query; the
// caller adds the windows' weights and coefficients.
func (r Rule) Options(k int) Options {
	return Options{K: k, C: r.C, RankBase: r.RankBase, Cap: r.Cap, Norm: r.Norm}
}
