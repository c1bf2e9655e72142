package fuse

import (
	"fmt"
	"math"
	"slices"
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
//	                 entropy, agree) at a temperature (not maxp);
//	                 adapt=kind-peak:0.1 per-query weights of each kind of
//	                 channel from a kind feature (kind-top, kind-peak,
//	                 kind-agree, kind-overlap, kind-corr); adapt=consensus:2
//	                 window weights from the batch's consensus, to a power
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

// Adapt is an adaptive weighting of the windows, label-free. Scope says
// which: window weights nw * softmax of one window feature ([Features]) over
// temperature T; or kind weights nk * softmax of one kind feature
// ([KindFeatures]) over T, each window weighing its kind's; or each
// window's agreement with the batch's consensus to the power T
// ([ConsensusWeights]).
type Adapt struct {
	Scope   AdaptScope
	Feature int
	T       float64
}

// AdaptScope is what an adaptive weighting weighs by.
type AdaptScope int

// Scopes of an adaptive weighting.
const (
	// AdaptWindows weighs each window by a feature of its list.
	AdaptWindows AdaptScope = iota
	// AdaptKinds weighs each kind of channel by a feature of its lists.
	AdaptKinds
	// AdaptConsensus weighs each window by its agreement with the batch's
	// consensus: the same weights for every query of a batch.
	AdaptConsensus
)

// consensusName is the adaptive weighting by the batch's consensus.
const consensusName = "consensus"

// name is the feature's name in the text form.
func (a Adapt) name() string {
	switch a.Scope {
	case AdaptKinds:
		return KindFeatureName(a.Feature)
	case AdaptConsensus:
		return consensusName
	}
	return FeatureName(a.Feature)
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
		n := map[AdaptScope]int{AdaptWindows: NumFeatures, AdaptKinds: NumKindFeatures, AdaptConsensus: 1}[a.Scope]
		switch {
		case a.Scope < AdaptWindows || a.Scope > AdaptConsensus:
			return fmt.Errorf("%w: unknown adaptive weighting %d", ErrOptions, int(a.Scope))
		case a.Feature < 0 || a.Feature >= n:
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

// parseAdapt parses FEATURE:TEMPERATURE (a window or kind feature) or
// consensus:POWER.
func parseAdapt(s string) (*Adapt, error) {
	name, ts, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("want FEATURE:TEMPERATURE, such as top:0.03, kind-peak:0.1 or consensus:2")
	}
	a := &Adapt{}
	switch i := slices.Index(kindFeatureNames[:], name); {
	case name == consensusName:
		a.Scope = AdaptConsensus
	case i >= 0:
		a.Scope, a.Feature = AdaptKinds, i
	default:
		f, err := ParseFeature(name)
		if err != nil {
			return nil, fmt.Errorf("%w, %s, or %s", err, strings.Join(kindFeatureNames[:], ", "), consensusName)
		}
		a.Feature = f
	}
	t, err := strconv.ParseFloat(ts, 64)
	if err != nil || !(t > 0) || math.IsInf(t, 1) {
		return nil, fmt.Errorf("temperature %q must be a positive number", ts)
	}
	a.T = t
	return a, nil
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
		p = append(p, "adapt="+r.Adapt.name()+":"+strconv.FormatFloat(r.Adapt.T, 'g', -1, 64))
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
