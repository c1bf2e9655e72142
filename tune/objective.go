package tune

import (
	"fmt"
	"math"

	"github.com/msrag/msrag/fusion"
)

// objective is what a fit maximises on ss: the mean over the sets of each
// set's mean over its queries of
//
//	ndcg - aversion * max(0, base - ndcg)
//
// where base is the query's nDCG@10 under the default fusion of the sets'
// indices (fusion.Default), the ranking a user has without a fitted
// model. Aversion 0 is mean nDCG@10 (Sets.Score); a positive one prefers a
// rule that loses few queries the default ranks well over one that gains as
// much on average with more losses.
type objective struct {
	ss       Sets
	aversion float64
	base     [][]float64
}

// newObjective scores the default fusion on ss once, where aversion needs it.
func newObjective(ss Sets, aversion float64) (*objective, error) {
	if !(aversion >= 0) || math.IsInf(aversion, 1) {
		return nil, fmt.Errorf("tune: loss aversion %g: want a finite number, 0 or more", aversion)
	}
	o := &objective{ss: ss, aversion: aversion, base: make([][]float64, len(ss))}
	if aversion == 0 {
		return o, nil
	}
	for i, s := range ss {
		per, _, err := s.Score(fusion.Default(s.Index.Layout()))
		if err != nil {
			return nil, err
		}
		o.base[i] = per
	}
	return o, nil
}

// value is query q of set i's term of the objective when its nDCG@10 is v.
func (o *objective) value(i, q int, v float64) float64 {
	if o.aversion == 0 || v >= o.base[i][q] {
		return v
	}
	return v - o.aversion*(o.base[i][q]-v)
}

// score is the objective of f over every query of the sets.
func (o *objective) score(f fusion.Fusion) (float64, error) {
	total := 0.0
	for i, s := range o.ss {
		per, mean, err := s.Score(f)
		if err != nil {
			return 0, err
		}
		if o.aversion == 0 {
			total += mean // Sets.Score's, to the last bit
			continue
		}
		sum := 0.0
		for q, v := range per {
			sum += o.value(i, q, v)
		}
		total += sum / float64(len(per))
	}
	return total / float64(len(o.ss)), nil
}
