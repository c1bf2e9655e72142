package fuse

import (
	"fmt"
	"math"
	"slices"
)

// Kind features: label-free signals of how one kind of channel (its windows
// together: an index's windows of that kind) answers a query,
// each on the kind's own scale, and of how the kinds agree. A kind's list
// for a query is its windows' RRF (every chunk adds 1/(rank+1), ranks from
// 0 counting a window's hits), its documents in score order, ties by
// document index; the features read its first KindDepth documents.
const (
	// KindTop is the kind's best document's RRF score over the kind's
	// windows: 1 when every window ranks the same chunk's document first
	// with no other chunk of it.
	KindTop = iota
	// KindPeak is (s1 - sn) / s1 over the top documents' RRF scores: near
	// 1 when one document stands out, 0 when all score alike (and with
	// fewer than two).
	KindPeak
	// KindAgree is the mean, over pairs of the kind's windows, of the
	// share of their top documents (FeatureDepth, each at its best chunk)
	// both hold; 1 for a kind of one window.
	KindAgree
	// KindOverlap is the share of the kind's top documents that another
	// kind also has among its top documents (0 with one kind).
	KindOverlap
	// KindCorrelation is Spearman's correlation between the kind's ranks
	// and the other kinds' RRF ranks over the union of their top documents,
	// a document missing from a list ranked after its last; the mean over
	// the other kinds (0 with one kind, or one document).
	KindCorrelation
	// NumKindFeatures is the number of features per query and kind.
	NumKindFeatures
)

// KindDepth is how many of a kind's top documents the kind features read.
const KindDepth = 10

var kindFeatureNames = [NumKindFeatures]string{"kind-top", "kind-peak", "kind-agree", "kind-overlap", "kind-corr"}

// KindFeatureName returns a kind feature's name: "kind-top", "kind-peak",
// "kind-agree", "kind-overlap", "kind-corr".
func KindFeatureName(f int) string {
	if f < 0 || f >= NumKindFeatures {
		return fmt.Sprintf("KindFeature(%d)", f)
	}
	return kindFeatureNames[f]
}

// kindLists is one query's view of every kind: its first KindDepth RRF
// documents in order with their scores, and its windows' top documents.
// The accumulators are kept from query to query.
type kindLists struct {
	docs   [][]int32
	scores [][]float64
	tops   [][][]int32 // per kind, per window of it
	acc    []map[int32]float64
	order  [][]int32 // per kind, documents in order of first vote
}

// KindFeatures computes every kind feature of every kind for every query of
// a batch: nq*nk*NumKindFeatures values, row-major by query, then kind.
// kind[w] is window w's kind, from 0 to nk-1; every kind has a window. A
// kind with no hits for a query has every feature 0. Sums run in document
// order. Given only (KindTop, ...), it computes those features and leaves
// the others 0, reading only what they need: a rule weighing kinds by
// kind-top or kind-peak needs no window's own top documents and no
// comparison between kinds.
func KindFeatures(windows []Hits, kind []int, nk int, only ...int) ([]float64, error) {
	nq, err := checkWindows(windows, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if err := checkKinds(kind, len(windows), nk); err != nil {
		return nil, err
	}
	want, err := wanted(only)
	if err != nil {
		return nil, err
	}
	out := make([]float64, nq*nk*NumKindFeatures)
	var kl kindLists
	for q := range nq {
		kl.fill(windows, kind, nk, q, want[KindAgree])
		for k := range nk {
			f := out[(q*nk+k)*NumKindFeatures : (q*nk+k+1)*NumKindFeatures]
			kl.features(f, k, kind, want)
		}
	}
	return out, nil
}

// wanted marks the features of only (all of them when it is empty).
func wanted(only []int) (want [NumKindFeatures]bool, err error) {
	for _, f := range only {
		if f < 0 || f >= NumKindFeatures {
			return want, fmt.Errorf("%w: unknown kind feature %d", ErrOptions, f)
		}
		want[f] = true
	}
	if len(only) == 0 {
		for f := range want {
			want[f] = true
		}
	}
	return want, nil
}

// checkKinds fails unless kind gives each of nw windows one of nk kinds,
// each kind at least one window.
func checkKinds(kind []int, nw, nk int) error {
	if len(kind) != nw || nk <= 0 {
		return fmt.Errorf("%w: %d kinds of window for %d windows of %d kinds", ErrShape, len(kind), nw, nk)
	}
	seen := make([]bool, nk)
	for w, k := range kind {
		if k < 0 || k >= nk {
			return fmt.Errorf("%w: window %d of kind %d of %d", ErrShape, w, k, nk)
		}
		seen[k] = true
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("%w: kind %d has no window", ErrShape, i)
	}
	return nil
}

// fill makes query q's lists of every kind, and its windows' top
// documents where tops is set.
func (kl *kindLists) fill(windows []Hits, kind []int, nk, q int, tops bool) {
	if len(kl.acc) != nk {
		*kl = kindLists{docs: make([][]int32, nk), scores: make([][]float64, nk), tops: make([][][]int32, nk),
			acc: make([]map[int32]float64, nk), order: make([][]int32, nk)}
		for k := range nk {
			kl.acc[k] = map[int32]float64{}
		}
	}
	for k := range nk {
		clear(kl.acc[k])
		kl.order[k], kl.tops[k] = kl.order[k][:0], kl.tops[k][:0]
	}
	for w, h := range windows {
		k := kind[w]
		docs, _ := h.row(q)
		rank := 0
		for _, d := range docs {
			if d < 0 {
				continue
			}
			if _, ok := kl.acc[k][d]; !ok {
				kl.order[k] = append(kl.order[k], d)
			}
			kl.acc[k][d] += 1 / float64(rank+1)
			rank++
		}
		if tops {
			top, _ := topDocs(h, q, nil, nil)
			kl.tops[k] = append(kl.tops[k], top)
		}
	}
	for k := range nk {
		kl.docs[k], kl.scores[k] = firstByScore(kl.order[k], kl.acc[k], KindDepth, kl.docs[k][:0], kl.scores[k][:0])
	}
}

// firstByScore appends to docs and scores the first n of ds by score
// (acc), higher first, ties by document index: what sorting them all
// would put first, in one pass.
func firstByScore(ds []int32, acc map[int32]float64, n int, docs []int32, scores []float64) ([]int32, []float64) {
	for _, d := range ds {
		s := acc[d]
		i := len(docs)
		for i > 0 && (s > scores[i-1] || s == scores[i-1] && d < docs[i-1]) {
			i--
		}
		if i >= n {
			continue
		}
		if len(docs) < n {
			docs, scores = append(docs, 0), append(scores, 0)
		}
		copy(docs[i+1:], docs[i:len(docs)-1])
		copy(scores[i+1:], scores[i:len(scores)-1])
		docs[i], scores[i] = d, s
	}
	return docs, scores
}

// features writes kind k's features that want marks into f.
func (kl *kindLists) features(f []float64, k int, kind []int, want [NumKindFeatures]bool) {
	s := kl.scores[k]
	if len(s) == 0 {
		return
	}
	nwk := 0
	for _, x := range kind {
		if x == k {
			nwk++
		}
	}
	top := s[:min(len(s), KindDepth)]
	f[KindTop] = top[0] / float64(nwk)
	if len(top) > 1 {
		f[KindPeak] = (top[0] - top[len(top)-1]) / top[0]
	}
	if want[KindAgree] {
		f[KindAgree] = pairAgreement(kl.tops[k])
	}
	if want[KindOverlap] || want[KindCorrelation] {
		f[KindOverlap], f[KindCorrelation] = kl.crossKind(k)
	}
	for i, w := range want {
		if !w {
			f[i] = 0
		}
	}
}

// pairAgreement is the mean over pairs of tops of the share of the first's
// documents the second holds; 1 for one list.
func pairAgreement(tops [][]int32) float64 {
	if len(tops) < 2 {
		return 1
	}
	sum, n := 0.0, 0
	for i := range tops {
		for j := i + 1; j < len(tops); j++ {
			sum += shared(tops[i], tops[j])
			n++
		}
	}
	return sum / float64(n)
}

// shared is the share of a's documents that b holds (0 when a is empty).
func shared(a, b []int32) float64 {
	if len(a) == 0 {
		return 0
	}
	n := 0
	for _, d := range a {
		if containsDoc(b, d) {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// crossKind returns the share of kind k's top documents another kind has
// among its top documents, and the mean Spearman correlation with the
// other kinds.
func (kl *kindLists) crossKind(k int) (overlap, corr float64) {
	mine := kl.docs[k][:min(len(kl.docs[k]), KindDepth)]
	var others []int32
	n := 0
	for o := range kl.docs {
		if o == k || len(kl.docs[o]) == 0 {
			continue
		}
		theirs := kl.docs[o][:min(len(kl.docs[o]), KindDepth)]
		others = append(others, theirs...)
		corr += spearman(mine, theirs)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return shared(mine, others), corr / float64(n)
}

// spearman is Spearman's correlation of two top lists over their union, a
// document missing from a list ranked after its last (len of that list);
// 0 when the union has fewer than two documents or a side has no spread.
func spearman(a, b []int32) float64 {
	var union []int32
	for _, d := range a {
		union = append(union, d)
	}
	for _, d := range b {
		if !containsDoc(union, d) {
			union = append(union, d)
		}
	}
	if len(union) < 2 {
		return 0
	}
	ra, rb := make([]float64, len(union)), make([]float64, len(union))
	for i, d := range union {
		ra[i], rb[i] = rankIn(a, d), rankIn(b, d)
	}
	return pearson(ra, rb)
}

// rankIn is d's position in list, or len(list) when it is missing.
func rankIn(list []int32, d int32) float64 {
	if i := slices.Index(list, d); i >= 0 {
		return float64(i)
	}
	return float64(len(list))
}

// pearson is the correlation of x and y (0 when either has no spread).
func pearson(x, y []float64) float64 {
	n := float64(len(x))
	mx, my := 0.0, 0.0
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	sxy, sxx, syy := 0.0, 0.0, 0.0
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// KindWeights turns one kind feature of a batch (feats as KindFeatures
// returns them, nk kinds) into per-query kind weights: nk times the softmax
// over the kinds of feature/t. Each query's weights average 1.
func KindWeights(feats []float64, nk, feature int, t float64) ([]float64, error) {
	switch {
	case feature < 0 || feature >= NumKindFeatures:
		return nil, fmt.Errorf("%w: unknown kind feature %d", ErrOptions, feature)
	case !(t > 0) || math.IsInf(t, 1):
		return nil, fmt.Errorf("%w: temperature %v must be positive and finite", ErrOptions, t)
	case nk <= 0 || len(feats)%(nk*NumKindFeatures) != 0:
		return nil, fmt.Errorf("%w: %d kind features for %d kinds", ErrShape, len(feats), nk)
	}
	nq := len(feats) / (nk * NumKindFeatures)
	out := make([]float64, nq*nk)
	for q := range nq {
		row := out[q*nk : (q+1)*nk]
		for k := range row {
			row[k] = feats[(q*nk+k)*NumKindFeatures+feature] / t
		}
		softmaxScaled(row)
	}
	return out, nil
}

// softmaxScaled replaces row by len(row) times its softmax.
func softmaxScaled(row []float64) {
	hi := math.Inf(-1)
	for _, x := range row {
		hi = max(hi, x)
	}
	sum := 0.0
	for i := range row {
		row[i] = math.Exp(row[i] - hi)
		sum += row[i]
	}
	for i := range row {
		row[i] = float64(len(row)) * row[i] / sum
	}
}

// ConsensusWeights weighs each window of a batch by how much it agrees with
// the batch's consensus: for each query, the share of the window's top
// documents (FeatureDepth, each at its best chunk) among the top
// FeatureDepth documents of the CombSUM of every window's min-max scores;
// a window's weight is its mean share over the queries to the power
// gamma, divided by the mean over the windows (so the weights average 1).
// They are the batch's: another batch of queries gives other weights. A
// window with no hits in the batch weighs 0; so does every window when
// none agrees.
func ConsensusWeights(windows []Hits, ndocs int, gamma float64) ([]float64, error) {
	nq, err := checkWindows(windows, ndocs)
	if err != nil {
		return nil, err
	}
	if !(gamma > 0) || math.IsInf(gamma, 1) {
		return nil, fmt.Errorf("%w: consensus power %v must be positive and finite", ErrOptions, gamma)
	}
	r, err := Fuse(MethodCombSUM, windows, ndocs, Options{Norm: NormMinMax, K: FeatureDepth})
	if err != nil {
		return nil, err
	}
	nw := len(windows)
	share := make([]float64, nw)
	tops := make([]int32, 0, FeatureDepth)
	for q := range nq {
		cons, _ := r.Query(q)
		for w, h := range windows {
			tops, _ = topDocs(h, q, tops[:0], nil)
			share[w] += shared(tops, cons)
		}
	}
	mean := 0.0
	for w := range share {
		share[w] = math.Pow(share[w]/float64(max(nq, 1)), gamma)
		mean += share[w]
	}
	mean /= float64(nw)
	for w := range share {
		if mean > 0 {
			share[w] /= mean
		} else {
			share[w] = 0
		}
	}
	return share, nil
}
