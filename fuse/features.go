package fuse

import (
	"fmt"
	"math"
)

// Query features: label-free signals of how well one window's list answers
// a query (query performance predictors), computed from the window's
// distinct documents in order of their first hits (their best chunks),
// the first FeatureDepth of them.
const (
	// FeatureTop is the best document score.
	FeatureTop = iota
	// FeatureGap is the best score minus the last of the top FeatureDepth
	// (0 with one document).
	FeatureGap
	// FeatureEntropy is the entropy of softmax(score / EntropyTemperature)
	// over the top documents, divided by log(n): near 0 when one document
	// stands out, 1 when all score alike (and with fewer than two).
	FeatureEntropy
	// FeatureAgree is the share of the window's top documents that another
	// window also has among its top documents.
	FeatureAgree
	// NumFeatures is the number of features per query and window.
	NumFeatures
)

var featureNames = [NumFeatures]string{"top", "gap", "entropy", "agree"}

// FeatureName returns a feature's name: "top", "gap", "entropy", "agree".
func FeatureName(f int) string {
	if f < 0 || f >= NumFeatures {
		return fmt.Sprintf("Feature(%d)", f)
	}
	return featureNames[f]
}

// ParseFeature returns the feature called name.
func ParseFeature(name string) (int, error) {
	for i, n := range featureNames {
		if n == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown feature %q (want one of %q)", ErrOptions, name, featureNames)
}

// FeatureDepth is how many of a window's top documents the features look at.
const FeatureDepth = 10

// EntropyTemperature scales scores before the softmax of FeatureEntropy;
// cosine scores of relevant and other documents differ by a few hundredths.
const EntropyTemperature = 0.05

// Features computes every feature of every window for every query of a
// batch: nq*len(windows)*NumFeatures values, row-major by query, then
// window. A window with no hits for a query has top 0, gap 0, entropy 1 and
// agree 0. Sums run in document order.
func Features(windows []Hits) ([]float64, error) {
	nq, err := checkWindows(windows, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	nw := len(windows)
	out := make([]float64, nq*nw*NumFeatures)
	tops := make([][]int32, nw)
	scores := make([][]float64, nw)
	for q := range nq {
		for w, h := range windows {
			tops[w], scores[w] = topDocs(h, q, tops[w][:0], scores[w][:0])
		}
		for w := range windows {
			f := out[(q*nw+w)*NumFeatures : (q*nw+w+1)*NumFeatures]
			scoreFeatures(f, scores[w])
			f[FeatureAgree] = agreement(tops, w)
		}
	}
	return out, nil
}

// topDocs appends query q's first FeatureDepth distinct documents of h and
// their scores (each document's first hit).
func topDocs(h Hits, q int, docs []int32, scores []float64) ([]int32, []float64) {
	d, s := h.row(q)
	for j, doc := range d {
		if len(docs) == FeatureDepth {
			break
		}
		if doc < 0 || containsDoc(docs, doc) {
			continue
		}
		docs, scores = append(docs, doc), append(scores, float64(s[j]))
	}
	return docs, scores
}

func containsDoc(docs []int32, d int32) bool {
	for _, x := range docs {
		if x == d {
			return true
		}
	}
	return false
}

// scoreFeatures writes top, gap and entropy of one window's top scores.
func scoreFeatures(f, s []float64) {
	f[FeatureEntropy] = 1
	if len(s) == 0 {
		return
	}
	f[FeatureTop] = s[0]
	f[FeatureGap] = s[0] - s[len(s)-1]
	if len(s) < 2 {
		return
	}
	sum := 0.0
	for _, x := range s {
		sum += math.Exp((x - s[0]) / EntropyTemperature)
	}
	h := 0.0
	for _, x := range s {
		p := math.Exp((x-s[0])/EntropyTemperature) / sum
		if p > 0 {
			h -= p * math.Log(p)
		}
	}
	f[FeatureEntropy] = h / math.Log(float64(len(s)))
}

// agreement is the share of tops[w] that another window also has.
func agreement(tops [][]int32, w int) float64 {
	if len(tops[w]) == 0 {
		return 0
	}
	n := 0
	for _, d := range tops[w] {
		for o := range tops {
			if o != w && containsDoc(tops[o], d) {
				n++
				break
			}
		}
	}
	return float64(n) / float64(len(tops[w]))
}

// AdaptiveWeights turns one feature of a batch (feats as Features returns
// them, nw windows) into query weights: per query, nw times the softmax over
// the windows of sign*feature/t, sign -1 for FeatureEntropy (a more decided
// window weighs more) and +1 for the others. Each query's weights average 1.
func AdaptiveWeights(feats []float64, nw, feature int, t float64) ([]float64, error) {
	switch {
	case feature < 0 || feature >= NumFeatures:
		return nil, fmt.Errorf("%w: unknown feature %d", ErrOptions, feature)
	case !(t > 0) || math.IsInf(t, 1):
		return nil, fmt.Errorf("%w: temperature %v must be positive and finite", ErrOptions, t)
	case nw <= 0 || len(feats)%(nw*NumFeatures) != 0:
		return nil, fmt.Errorf("%w: %d features for %d windows", ErrShape, len(feats), nw)
	}
	sign := 1.0
	if feature == FeatureEntropy {
		sign = -1
	}
	nq := len(feats) / (nw * NumFeatures)
	out := make([]float64, nq*nw)
	for q := range nq {
		row := out[q*nw : (q+1)*nw]
		hi := math.Inf(-1)
		for w := range row {
			row[w] = sign * feats[(q*nw+w)*NumFeatures+feature] / t
			hi = max(hi, row[w])
		}
		sum := 0.0
		for w := range row {
			row[w] = math.Exp(row[w] - hi)
			sum += row[w]
		}
		for w := range row {
			row[w] = float64(nw) * row[w] / sum
		}
	}
	return out, nil
}
