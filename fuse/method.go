package fuse

import (
	"fmt"
	"slices"
)

// Method is a fusion rule. The package documentation gives each rule's
// score, evidence and order.
type Method int

const (
	// MethodRRF is Reciprocal Rank Fusion over chunks: every chunk votes
	// for its document with weight / (rank + RankBase + C), its rank counted
	// among the window's non-missing hits from 0. [Options.Cap] limits the
	// chunks of a document that vote per window.
	MethodRRF Method = iota
	// MethodDocRRF is Reciprocal Rank Fusion over per-window document lists:
	// in each window a document is ranked by its best chunk (its first hit),
	// counting distinct documents from 0, and adds
	// weight / (docrank + RankBase + C).
	MethodDocRRF
	// MethodCombSUM adds, over the windows, weight times the document's
	// per-window score normalised as [Options.Norm] says.
	MethodCombSUM
	// MethodCombMNZ is CombSUM times the number of windows that retrieved
	// the document.
	MethodCombMNZ
	// MethodMaxP ranks a document by its best chunk score in any window.
	// It takes no weights.
	MethodMaxP
	// MethodLinear adds, over the windows, weight times a linear
	// combination ([Options.Linear]) of three features of the document in
	// the window: its z-score normalised score (the floor when missed, as
	// CombSUM with NormZScore), 1/(docrank+1), and its chunk votes, the sum
	// of 1/(rank+1) over its chunks. The coefficients are learned (msrag
	// tune); CombSUM-z, DocRRF and RRF with c = 1 are special cases.
	MethodLinear

	numMethods = iota
)

var methodNames = [numMethods]string{"rrf", "docrrf", "combsum", "combmnz", "maxp", "linear"}

// String returns the rule's name: "rrf", "docrrf", "combsum", "combmnz",
// "maxp" or "linear".
func (m Method) String() string {
	if m < 0 || m >= numMethods {
		return fmt.Sprintf("Method(%d)", int(m))
	}
	return methodNames[m]
}

// MethodNames returns the names of every method, in Method order.
func MethodNames() []string { return slices.Clone(methodNames[:]) }

// ParseMethod returns the Method whose [Method.String] is s.
func ParseMethod(s string) (Method, error) {
	for m, name := range methodNames {
		if s == name {
			return Method(m), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown method %q (want one of %q)", ErrOptions, s, methodNames)
}

// Norm says how CombSUM and CombMNZ normalise a window's document scores
// for one query. The statistics are taken over the documents the window
// retrieved for that query, each with the score of its best chunk (its first
// hit) in the window.
type Norm int

const (
	// NormNone keeps the raw scores.
	NormNone Norm = iota
	// NormMinMax maps s to (s - min) / (max - min); when max == min every
	// retrieved document gets 1.
	NormMinMax
	// NormZScore maps s to (s - mean) / std, std the population standard
	// deviation; when all the scores are equal (std == 0) every retrieved
	// document gets 0.
	NormZScore

	numNorms = iota
)

var normNames = [numNorms]string{"none", "minmax", "zscore"}

// String returns the normalisation's name: "none", "minmax" or "zscore".
func (n Norm) String() string {
	if n < 0 || n >= numNorms {
		return fmt.Sprintf("Norm(%d)", int(n))
	}
	return normNames[n]
}

// ParseNorm returns the Norm whose [Norm.String] is s.
func ParseNorm(s string) (Norm, error) {
	for n, name := range normNames {
		if s == name {
			return Norm(n), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown normalisation %q (want one of %q)", ErrOptions, s, normNames)
}

// Features of a document in one window that MethodLinear combines, in the
// order of [Options.Linear]'s coefficients.
const (
	LinearScore = iota // the z-score normalised document score
	LinearRank         // 1 / (docrank + 1)
	LinearVotes        // sum of 1 / (rank + 1) over the document's chunks
	NumLinear
)
