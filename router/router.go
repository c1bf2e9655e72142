// Package router learns to weigh windows per query: a multinomial logistic
// regression from a query's embedding and the label-free features of every
// window's list (fuse.Features) to a distribution over the windows, trained
// on soft targets made from each training query's own per-window scores (as
// Mix-of-Granularity routes between granularities). A query's window weights
// are then the number of windows times that distribution: they average 1.
//
// Inputs are standardised with the training set's mean and deviation; the
// model is fitted by full-batch gradient descent on the cross-entropy to the
// soft targets plus an L2 penalty (not on the bias), from zeros, for a fixed
// number of steps, so a fit is deterministic.
package router

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrShape marks inputs whose sizes do not agree.
var ErrShape = errors.New("router: inconsistent shape")

// ErrInvalid marks a model whose fields cannot describe a router (a damaged
// or hand-edited fusion model file).
var ErrInvalid = errors.New("router: invalid model")

// maxInputs bounds Inputs: far above any embedding's dims plus features.
const maxInputs = 1 << 20

// Validate fails unless m's fields agree with one another: at least one
// window, each named once; Inputs positive; Mean, Std (positive) and W of the
// lengths Inputs and (Inputs+1) x windows; every number finite. The error
// names the field.
func (m *Model) Validate() error {
	k := len(m.Channels)
	switch {
	case k == 0:
		return fmt.Errorf("%w: windows: none", ErrInvalid)
	case m.Inputs <= 0 || m.Inputs > maxInputs:
		return fmt.Errorf("%w: inputs: %d, want 1 to %d", ErrInvalid, m.Inputs, maxInputs)
	case len(m.Mean) != m.Inputs:
		return fmt.Errorf("%w: mean: %d values for %d inputs", ErrInvalid, len(m.Mean), m.Inputs)
	case len(m.Std) != m.Inputs:
		return fmt.Errorf("%w: std: %d values for %d inputs", ErrInvalid, len(m.Std), m.Inputs)
	case len(m.W) != (m.Inputs+1)*k:
		return fmt.Errorf("%w: w: %d values, want (%d inputs + 1) x %d windows = %d", ErrInvalid, len(m.W), m.Inputs, k, (m.Inputs+1)*k)
	case math.IsNaN(m.Lambda) || math.IsInf(m.Lambda, 0) || m.Lambda < 0:
		return fmt.Errorf("%w: lambda: %v, want a finite value >= 0", ErrInvalid, m.Lambda)
	case !slices.Contains(FeatureSets, m.Set()):
		return fmt.Errorf("%w: features: %q is not a feature set this msrag computes (%q): the router is of another version", ErrInvalid, m.Features, FeatureSets)
	}
	seen := make(map[string]bool, k)
	for i, w := range m.Channels {
		if w == "" || seen[w] {
			return fmt.Errorf("%w: windows[%d]: %q is empty or repeated", ErrInvalid, i, w)
		}
		seen[w] = true
	}
	for _, f := range []struct {
		name string
		v    []float64
	}{{"mean", m.Mean}, {"std", m.Std}, {"w", m.W}} {
		for i, v := range f.v {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: %s[%d]: %v, want a finite value", ErrInvalid, f.name, i, v)
			}
			if f.name == "std" && v <= 0 {
				return fmt.Errorf("%w: std[%d]: %v, want a positive value", ErrInvalid, i, v)
			}
		}
	}
	return nil
}

// CheckInputs fails unless m takes rows of a dims-dimensional query embedding
// and nf features per window: Inputs = dims + len(Windows) x nf.
func (m *Model) CheckInputs(dims, nf int) error {
	if want := dims + len(m.Channels)*nf; m.Inputs != want {
		return fmt.Errorf("%w: inputs: %d, want %d (%d embedding dims + %d windows x %d features)", ErrShape, m.Inputs, want, dims, len(m.Channels), nf)
	}
	return nil
}

// FeatureSet names what a router reads, with the version of its
// definition: a router is refused by an msrag that computes its features
// otherwise.
type FeatureSet string

// The feature sets.
const (
	// EmbeddingWindows is the query's embedding followed by every
	// window's fuse.Features: it serves indices of one embedding model.
	// Files that name no feature set mean it.
	EmbeddingWindows FeatureSet = "embedding+windows/1"
	// Kinds is every kind's fuse.KindFeatures (kinds in the order their
	// first window comes) followed by every window's fuse.FeatureAgree:
	// ranks and overlaps only, no embedding and no raw score, so that they
	// mean the same on every dataset and model.
	Kinds FeatureSet = "kinds/1"
)

// FeatureSets are the feature sets this msrag computes.
var FeatureSets = []FeatureSet{EmbeddingWindows, Kinds}

// Set returns m's feature set (EmbeddingWindows when the file names none).
func (m *Model) Set() FeatureSet {
	if m.Features == "" {
		return EmbeddingWindows
	}
	return m.Features
}

// KindInputs builds the input rows of the Kinds feature set for n queries:
// each query's perKind kind features (kinds[q*perKind:]) followed by
// feature pick of each of nw windows (feats, nf per window and query).
func KindInputs(kinds []float64, perKind int, feats []float64, nw, nf, pick int) ([]float64, error) {
	if perKind <= 0 || nw <= 0 || pick < 0 || pick >= nf || len(kinds)%perKind != 0 || len(feats) != len(kinds)/perKind*nw*nf {
		return nil, fmt.Errorf("%w: %d kind features of %d per query, %d features for %d windows of %d", ErrShape, len(kinds), perKind, len(feats), nw, nf)
	}
	n := len(kinds) / perKind
	out := make([]float64, 0, n*(perKind+nw))
	for q := range n {
		out = append(out, kinds[q*perKind:(q+1)*perKind]...)
		for w := range nw {
			out = append(out, feats[(q*nw+w)*nf+pick])
		}
	}
	return out, nil
}

// Model is a fitted router. Its fields are what a fusion model file stores.
type Model struct {
	// Channels names the channels weighed, in the order of the outputs.
	Channels []string `json:"windows"`
	// Inputs is the length of an input row: embedding dims plus
	// len(Channels) * the number of features per channel.
	Inputs int `json:"inputs"`
	// Mean and Std standardise the inputs.
	Mean []float64 `json:"mean"`
	Std  []float64 `json:"std"`
	// W holds (Inputs+1) x len(Windows) coefficients, row-major; the last
	// row is the bias.
	W []float64 `json:"w"`
	// Lambda is the L2 penalty it was fitted with.
	Lambda float64 `json:"lambda"`
	// Features is what the inputs are; empty means EmbeddingWindows.
	Features FeatureSet `json:"features,omitempty"`
}

// Steps and Rate are the gradient descent's step count and step size.
const (
	Steps = 300
	Rate  = 0.5
)

// Fit fits a router to n input rows x (n*inputs values) and soft targets y
// (n*len(windows) values, each row a distribution) with L2 penalty lambda.
func Fit(x []float64, inputs int, y []float64, windows []string, lambda float64) (*Model, error) {
	k := len(windows)
	if inputs <= 0 || k == 0 || len(x)%inputs != 0 || len(y) != len(x)/inputs*k || len(x) == 0 {
		return nil, fmt.Errorf("%w: %d inputs of %d, %d targets for %d windows", ErrShape, len(x), inputs, len(y), k)
	}
	m := &Model{Channels: windows, Inputs: inputs, Lambda: lambda, W: make([]float64, (inputs+1)*k)}
	m.Mean, m.Std = standardisation(x, inputs)
	xs := m.standardise(x)
	n := len(x) / inputs
	grad := make([]float64, len(m.W))
	p := make([]float64, k)
	for range Steps {
		clear(grad)
		for i := range n {
			m.softmax(p, xs[i*(inputs+1):(i+1)*(inputs+1)])
			for c := range k {
				p[c] -= y[i*k+c]
			}
			addOuter(grad, xs[i*(inputs+1):(i+1)*(inputs+1)], p)
		}
		for j := range grad {
			g := grad[j] / float64(n)
			if j < inputs*k {
				g += lambda * m.W[j]
			}
			m.W[j] -= Rate * g
		}
	}
	return m, nil
}

// standardisation returns the mean and the deviation (1 where it is 0) of
// each input column.
func standardisation(x []float64, inputs int) (mean, std []float64) {
	n := float64(len(x) / inputs)
	mean, std = make([]float64, inputs), make([]float64, inputs)
	for i, v := range x {
		mean[i%inputs] += v
	}
	for j := range mean {
		mean[j] /= n
	}
	for i, v := range x {
		d := v - mean[i%inputs]
		std[i%inputs] += d * d
	}
	for j := range std {
		std[j] = math.Sqrt(std[j] / n)
		if std[j] == 0 {
			std[j] = 1
		}
	}
	return mean, std
}

// standardise returns the rows of x standardised, each with a 1 appended.
func (m *Model) standardise(x []float64) []float64 {
	n := len(x) / m.Inputs
	out := make([]float64, 0, n*(m.Inputs+1))
	for i := range n {
		for j, v := range x[i*m.Inputs : (i+1)*m.Inputs] {
			out = append(out, (v-m.Mean[j])/m.Std[j])
		}
		out = append(out, 1)
	}
	return out
}

// softmax writes into p the model's distribution for one standardised row.
func (m *Model) softmax(p, row []float64) {
	k := len(m.Channels)
	hi := math.Inf(-1)
	for c := range k {
		z := 0.0
		for j, v := range row {
			z += v * m.W[j*k+c]
		}
		p[c] = z
		hi = max(hi, z)
	}
	sum := 0.0
	for c := range k {
		p[c] = math.Exp(p[c] - hi)
		sum += p[c]
	}
	for c := range k {
		p[c] /= sum
	}
}

// addOuter adds row x (p) to g, a len(row) x len(p) matrix.
func addOuter(g, row, p []float64) {
	k := len(p)
	for j, v := range row {
		for c, pc := range p {
			g[j*k+c] += v * pc
		}
	}
}

// Predict returns the distribution over the windows for each input row.
func (m *Model) Predict(x []float64) ([]float64, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if len(x)%m.Inputs != 0 {
		return nil, fmt.Errorf("%w: %d inputs is not a multiple of %d", ErrShape, len(x), m.Inputs)
	}
	k := len(m.Channels)
	xs := m.standardise(x)
	n := len(x) / m.Inputs
	out := make([]float64, n*k)
	for i := range n {
		m.softmax(out[i*k:(i+1)*k], xs[i*(m.Inputs+1):(i+1)*(m.Inputs+1)])
	}
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: row %d: the weights overflow (inputs or coefficients too large)", ErrInvalid, i/k)
		}
	}
	return out, nil
}

// Weights returns each row's window weights: len(Windows) times its
// distribution.
func (m *Model) Weights(x []float64) ([]float64, error) {
	p, err := m.Predict(x)
	for i := range p {
		p[i] *= float64(len(m.Channels))
	}
	return p, err
}

// Inputs builds the input rows of a batch: each query's embedding (dims
// float32) followed by the features of every window (fuse.Features layout:
// nw*nf per query).
func Inputs(queries []float32, dims int, feats []float64, nw, nf int) ([]float64, error) {
	if dims <= 0 || len(queries)%dims != 0 || len(feats) != len(queries)/dims*nw*nf {
		return nil, fmt.Errorf("%w: %d query floats of %d dims, %d features for %d windows of %d", ErrShape, len(queries), dims, len(feats), nw, nf)
	}
	n := len(queries) / dims
	row := dims + nw*nf
	out := make([]float64, 0, n*row)
	for q := range n {
		for _, v := range queries[q*dims : (q+1)*dims] {
			out = append(out, float64(v))
		}
		out = append(out, feats[q*nw*nf:(q+1)*nw*nf]...)
	}
	return out, nil
}

// SoftTargets turns per-query per-window scores (n*k, e.g. nDCG@10) into
// distributions: softmax over the windows of score/temperature.
func SoftTargets(scores []float64, k int, temperature float64) []float64 {
	out := make([]float64, len(scores))
	for i := 0; i < len(scores); i += k {
		hi := math.Inf(-1)
		for _, v := range scores[i : i+k] {
			hi = max(hi, v)
		}
		sum := 0.0
		for c, v := range scores[i : i+k] {
			out[i+c] = math.Exp((v - hi) / temperature)
			sum += out[i+c]
		}
		for c := range k {
			out[i+c] /= sum
		}
	}
	return out
}
