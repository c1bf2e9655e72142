// Package dense is the kind of channel "dense": a window's chunks embedded
// by the index's model and searched by vector in a FAISS index (one file
// per window, NAME.faiss), the scores canonical so that a sharded search
// ranks as one index.
//
// An index records its dense windows in the manifest's model, factory,
// metric and windows (each window's index_file and sha256): the legacy
// sections of formats 1 to 3. The kind's channels are named by their
// windows ("w100", "full") and its group (windows=dense) fuses the sliding
// windows, not the full one.
package dense

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/indexfile"
)

// Kind is the dense kind of channel, registered as "dense".
var Kind channel.Kind = kind{}

// Name is the kind's registered name.
const Name = "dense"

func init() { channel.Register(Kind) }

// ErrNone is wrapped by the error for a dense channel asked of an index
// without dense windows: an index without a model (channel.ErrNoModel).
var ErrNone = channel.ErrNoModel

// Params are the settings of a build's dense windows; the zero value is an
// exact inner-product index ("Flat").
type Params struct {
	// Factory is the FAISS index factory string of every window; default
	// "Flat".
	Factory string
	// Metric is the FAISS metric; default inner product.
	Metric faiss.Metric
	// TrainSize is how many vectors of each window train an index that
	// needs training (IVF, PQ); default 65,536. They are buffered until
	// then.
	TrainSize int
}

func (p Params) withDefaults() Params {
	if p.Factory == "" {
		p.Factory = "Flat"
	}
	if p.TrainSize <= 0 {
		p.TrainSize = 1 << 16
	}
	return p
}

type kind struct{}

func (kind) Name() string   { return Name }
func (kind) Order() int     { return 0 }
func (kind) WholeDoc() bool { return false }

// ChannelName is the window's name: "w100", "full".
func (kind) ChannelName(w chunk.Window) string { return w.Name() }

var sizeName = regexp.MustCompile(`^(?:w=?)?([1-9][0-9]*)$`)

// ParseName reads "w100", "w=100", "100" and "full".
func (kind) ParseName(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "full" {
		return s, true
	}
	m := sizeName.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	if _, err := strconv.Atoi(m[1]); err != nil {
		return "", false
	}
	return "w" + m[1], true
}

// Grouped: windows=dense fuses the sliding windows; the full window is
// ranked alone (MTEB's way), not fused.
func (kind) Grouped(w chunk.Window) bool { return !w.Truncate }

func (kind) Needs() channel.Needs { return channel.QueryVectors | channel.ChunkVectors }

func (kind) Absent() error {
	return fmt.Errorf("it was built with --model none: %w", ErrNone)
}

// In: every index with a model has dense windows.
func (kind) In(m *indexfile.Manifest) bool { return !m.Model.None() }

// Settings is the metric: shards of other FAISS factories rank together
// by score, shards of another metric do not, so the factory (which the
// manifest records too) is left out of the identity.
func (kind) Settings(m *indexfile.Manifest) channel.Settings {
	return channel.Settings{{Key: "metric", Value: m.Metric}}
}

// Describe is the metric a build with params records.
func (kind) Describe(params any) (channel.Settings, error) {
	p, err := paramsOf(params)
	if err != nil {
		return nil, err
	}
	return channel.Settings{{Key: "metric", Value: p.Metric.String()}}, nil
}

// paramsOf returns a build's parameters, defaults applied.
func paramsOf(params any) (Params, error) {
	if params == nil {
		return Params{}.withDefaults(), nil
	}
	p, ok := params.(Params)
	if !ok {
		return Params{}, fmt.Errorf("dense: parameters of type %T, want dense.Params", params)
	}
	if p.Metric != faiss.InnerProduct && p.Metric != faiss.L2 {
		return Params{}, fmt.Errorf("dense: %v: want inner product or L2", p.Metric)
	}
	return p.withDefaults(), nil
}

// Flags: the FAISS factory and metric (the command line's --factory and
// --metric) and the training sample's size.
func (kind) Flags() []channel.Flag {
	return []channel.Flag{
		{Key: "factory", Default: "Flat", Alias: "factory",
			Usage: "FAISS index factory string (Flat, IVF1024,Flat, IVF4096,PQ48, HNSW32, OPQ16,IVF256,PQ16, SQ8, ...; checked before use, NSG not supported)"},
		{Key: "metric", Default: "ip", Alias: "metric", Usage: "ip (inner product) or l2"},
		{Key: "train-size", Default: "65536", Usage: "vectors of each window that train an index that needs training (IVF, PQ)"},
	}
}

// ParseParams reads factory, metric and train-size.
func (k kind) ParseParams(s channel.Settings) (any, error) {
	p := Params{}.withDefaults()
	err := channel.ParseFlags(s, k.Flags(), func(key, v string) error {
		switch key {
		case "factory":
			p.Factory = v
			return faiss.CheckFactory(v, 0)
		case "metric":
			m, err := ParseMetric(v)
			p.Metric = m
			return err
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("%s: want a positive number of vectors", v)
		}
		p.TrainSize = n
		return nil
	})
	return p, err
}

// ParseMetric reads "ip" (inner product) or "l2".
func ParseMetric(s string) (faiss.Metric, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ip", "inner_product", "innerproduct":
		return faiss.InnerProduct, nil
	case "l2":
		return faiss.L2, nil
	}
	return 0, fmt.Errorf("%s: want ip or l2", s)
}

// CheckModel fails unless the factory of params makes an index of vectors
// of dims (channel.ModelChecker): FAISS builds one (faiss.CheckBuild).
func (kind) CheckModel(params any, dims int) error {
	p, err := paramsOf(params)
	if err != nil {
		return err
	}
	return faiss.CheckBuild(dims, p.Factory, p.Metric)
}

// CheckManifest checks the metric and that every window names its FAISS
// file; the manifest's model has the vectors' dims (checked with it).
func (kind) CheckManifest(m *indexfile.Manifest) ([]channel.FileRef, error) {
	if m.Metric != "" {
		if _, err := ParseMetric(m.Metric); err != nil {
			return nil, fmt.Errorf("metric %w", err)
		}
	}
	var files []channel.FileRef
	for i, w := range m.Windows {
		files = append(files, channel.FileRef{Field: fmt.Sprintf("windows[%d].index_file", i), Name: w.IndexFile})
	}
	return files, nil
}

// Default: a build with a model makes dense windows unless asked for other
// kinds alone.
func (kind) Default(model bool) bool { return model }

// Channel is the configuration of a build's dense windows with p.
func (p Params) Channel() channel.Config { return channel.Config{Kind: Kind, Params: p} }

func (kind) DecodeStats([]byte) (channel.Stats, error) {
	return nil, errors.New("dense: the kind has no statistics")
}

// NewBuilder makes an empty FAISS index per window.
func (kind) NewBuilder(cfg channel.BuildConfig) (channel.Builder, error) {
	p, err := paramsOf(cfg.Params)
	if err != nil {
		return nil, err
	}
	if cfg.Dims <= 0 {
		return nil, fmt.Errorf("dense: a build without a model has no dense windows: %w", ErrNone)
	}
	b := &builder{params: p, windows: make([]*window, len(cfg.Windows))}
	for i, w := range cfg.Windows {
		ix, err := faiss.New(cfg.Dims, p.Factory, p.Metric)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("msrag: window %s: %w", w.Name(), err)
		}
		b.windows[i] = &window{spec: w, index: ix}
	}
	return b, nil
}
