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

// ErrNone is wrapped by the error for a dense channel (or a query
// embedding) asked of an index without dense windows.
var ErrNone = errors.New("no dense windows")

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

// Params is the metric: shards of other FAISS factories rank together by
// score, shards of another metric do not.
func (kind) Params(m *indexfile.Manifest) string { return "metric " + m.Metric }

func (kind) DecodeStats([]byte) (channel.Stats, error) {
	return nil, errors.New("dense: the kind has no statistics")
}

// NewBuilder makes an empty FAISS index per window.
func (kind) NewBuilder(cfg channel.BuildConfig) (channel.Builder, error) {
	p, _ := cfg.Params.(Params)
	if cfg.Params != nil {
		if _, ok := cfg.Params.(Params); !ok {
			return nil, fmt.Errorf("dense: parameters of type %T, want dense.Params", cfg.Params)
		}
	}
	if cfg.Dims <= 0 {
		return nil, fmt.Errorf("dense: a build without a model has no dense windows: %w", ErrNone)
	}
	p = p.withDefaults()
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
