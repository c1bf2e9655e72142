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
	"strconv"
	"strings"

	"github.com/msrag/msrag/channel"
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

func (kind) Name() string         { return Name }
func (kind) Needs() channel.Needs { return channel.QueryVectors | channel.ChunkVectors }

// absent is the error for a dense channel asked of an index without a model.
var absent = fmt.Errorf("it was built with --model none: %w", ErrNone)

// Traits: the dense kind's channels are named by their windows ("w100",
// "full"), first in a layout; its group (windows=dense) fuses the sliding
// windows, the full window being ranked alone (MTEB's way); a build with a
// model makes them unless asked for other kinds alone.
func (kind) Traits() channel.Traits {
	return channel.Traits{Order: 0, FullApart: true, Default: channel.BuildsWithModel, Absent: absent}
}

// Params are the defaults: an exact inner-product index.
func (kind) Params() channel.Params { return Params{}.withDefaults() }

// Recorded reads the legacy sections every index with a model has: the
// metric (its one setting: shards of other FAISS factories rank together
// by score, shards of another metric do not, so the factory, which the
// manifest records too, is left out of the identity) and every window's
// FAISS file; the manifest's model has the vectors' dims (checked with
// it).
func (kind) Recorded(m *indexfile.Manifest) (*channel.Record, error) {
	if m.Model.None() {
		return nil, nil
	}
	if m.Metric != "" {
		if _, err := ParseMetric(m.Metric); err != nil {
			return nil, fmt.Errorf("metric %w", err)
		}
	}
	r := &channel.Record{Settings: channel.Settings{{Key: "metric", Value: m.Metric}}}
	for i, w := range m.Windows {
		r.Files = append(r.Files, channel.FileRef{Field: fmt.Sprintf("windows[%d].index_file", i), Name: w.IndexFile})
	}
	return r, nil
}

// Kind is the dense kind.
func (Params) Kind() channel.Kind { return Kind }

// Settings is the metric a build with p records.
func (p Params) Settings() (channel.Settings, error) {
	p, err := p.check()
	if err != nil {
		return nil, err
	}
	return channel.Settings{{Key: "metric", Value: p.Metric.String()}}, nil
}

// check returns p with its defaults, or why it cannot build.
func (p Params) check() (Params, error) {
	if p.Metric != faiss.InnerProduct && p.Metric != faiss.L2 {
		return Params{}, fmt.Errorf("dense: %v: want inner product or L2", p.Metric)
	}
	return p.withDefaults(), nil
}

// Flags: the FAISS factory and metric (the command line's --factory and
// --metric) and the training sample's size.
func (Params) Flags() []channel.Flag {
	return []channel.Flag{
		{Key: "factory", Default: "Flat", Alias: "factory",
			Usage: "FAISS index factory string (Flat, IVF1024,Flat, IVF4096,PQ48, HNSW32, OPQ16,IVF256,PQ16, SQ8, ...; checked before use, NSG not supported)"},
		{Key: "metric", Default: "ip", Alias: "metric", Usage: "ip (inner product) or l2"},
		{Key: "train-size", Default: "65536", Usage: "vectors of each window that train an index that needs training (IVF, PQ)"},
	}
}

// Parse reads factory, metric and train-size.
func (p Params) Parse(s channel.Settings) (channel.Params, error) {
	p = p.withDefaults()
	err := channel.ParseFlags(s, p.Flags(), func(key, v string) error {
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

// CheckModel fails unless the factory of p makes an index of vectors of
// dims (channel.ModelChecker): FAISS builds one (faiss.CheckBuild).
func (p Params) CheckModel(dims int) error {
	p, err := p.check()
	if err != nil {
		return err
	}
	return faiss.CheckBuild(dims, p.Factory, p.Metric)
}

func (kind) DecodeStats([]byte) (channel.Stats, error) {
	return nil, errors.New("dense: the kind has no statistics")
}

// NewBuilder makes an empty FAISS index per window.
func (kind) NewBuilder(params channel.Params, cfg channel.BuildConfig) (channel.Builder, error) {
	p, ok := params.(Params)
	if !ok {
		return nil, fmt.Errorf("dense: parameters of type %T, want dense.Params", params)
	}
	p, err := p.check()
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
	return channel.BuilderOf[struct{}](b), nil
}
