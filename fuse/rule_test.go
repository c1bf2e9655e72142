package fuse_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// TestRuleSetFormat reads a rule's own parameters and writes them back in
// the fixed order, the caller's parameters between the scoring ones and the
// query weighting.
func TestRuleSetFormat(t *testing.T) {
	var r fuse.Rule
	for _, kv := range [][2]string{{"adapt", "entropy:0.3"}, {"cap", "3"}, {"base", "1"}, {"c", "60"}} {
		if ok, err := r.Set(kv[0], kv[1]); !ok || err != nil {
			t.Fatalf("%s=%s: %v, %v", kv[0], kv[1], ok, err)
		}
	}
	if ok, _ := r.Set("windows", "100"); ok {
		t.Error("windows is the caller's parameter, not the rule's")
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.Format([]string{"windows=100"}), "rrf:c=60,base=1,cap=3,windows=100,adapt=entropy:0.3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := (fuse.Rule{Method: fuse.MethodCombSUM, Norm: fuse.NormZScore}).String(); got != "combsum:norm=zscore" {
		t.Errorf("got %q", got)
	}
	if got := (fuse.Rule{C: 1}).String(); got != "rrf" {
		t.Errorf("c=1 is the default: %q", got)
	}
}

// TestRuleValidate: the one check of a rule's parameters, shared by Fuse's
// options.
func TestRuleValidate(t *testing.T) {
	for _, tc := range []struct {
		r    fuse.Rule
		want string
	}{
		{fuse.Rule{Method: fuse.MethodCombSUM, C: 60}, "c and base are parameters of rrf and docrrf, not combsum"},
		{fuse.Rule{Method: fuse.MethodDocRRF, Cap: 2}, "cap is a parameter of rrf, not docrrf"},
		{fuse.Rule{Method: fuse.MethodRRF, Norm: fuse.NormMinMax}, "norm is a parameter of combsum and combmnz"},
		{fuse.Rule{Method: fuse.MethodMaxP, Adapt: &fuse.Adapt{T: 1}}, "maxp takes no weights"},
		{fuse.Rule{C: math.NaN()}, "must not be negative, and c finite"},
		{fuse.Rule{RankBase: -1}, "base -1 must not be negative"},
		{fuse.Rule{Cap: -2}, "cap -2 must not be negative"},
		{fuse.Rule{Adapt: &fuse.Adapt{Feature: fuse.NumFeatures, T: 1}}, "unknown feature"},
		{fuse.Rule{Adapt: &fuse.Adapt{T: math.Inf(1)}}, "temperature +Inf"},
		{fuse.Rule{Method: fuse.Method(42)}, "unknown method 42"},
	} {
		err := tc.r.Validate()
		if !errors.Is(err, fuse.ErrOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.r, err, tc.want)
		}
	}
	var r fuse.Rule
	for _, kv := range [][2]string{{"c", "x"}, {"norm", "l2"}, {"adapt", "top"}, {"adapt", "top:-1"}} {
		if ok, err := r.Set(kv[0], kv[1]); !ok || err == nil {
			t.Errorf("%s=%s: %v, %v", kv[0], kv[1], ok, err)
		}
	}
}
