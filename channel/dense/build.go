package dense

import (
	"fmt"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
)

// window is one window's FAISS index, and while it is built the vectors not
// yet added. With the windows on GPUs, gpu is the index's copy there: it
// finds the candidates, and index (kept in main memory) rescores them.
type window struct {
	spec    chunk.Window
	index   *faiss.Index
	gpu     *faiss.Index
	pending []float32
}

// builder fills the windows' FAISS indices.
type builder struct {
	params  Params
	windows []*window
}

// Prepare: the dense kind reads no text.
func (*builder) Prepare() func(string) struct{} { return nil }

func (*builder) AddDoc(struct{}) error { return nil }

// addBlock is how many vectors a trained index takes at once.
const addBlock = 4096

// Add queues v for window w's index, adding in blocks and training the
// index on the first TrainSize vectors when it needs training.
func (b *builder) Add(w int, _ struct{}, v []float32) error {
	win := b.windows[w]
	if v == nil {
		return fmt.Errorf("msrag: window %s: a chunk without a vector", win.spec.Name())
	}
	win.pending = append(win.pending, v...)
	dims := win.index.Dim()
	if !win.index.IsTrained() {
		if len(win.pending)/dims < b.params.TrainSize {
			return nil
		}
	} else if len(win.pending)/dims < addBlock {
		return nil
	}
	return win.flush(false)
}

// flush trains the index if needed and adds the queued vectors.
func (w *window) flush(final bool) error {
	if len(w.pending) == 0 {
		return nil
	}
	if !w.index.IsTrained() {
		if err := w.index.Train(w.pending); err != nil {
			n := len(w.pending) / w.index.Dim()
			hint := ""
			if final {
				hint = fmt.Sprintf(" (only %d vectors to train on: use a smaller index or Flat)", n)
			}
			return fmt.Errorf("msrag: window %s: training the index%s: %w", w.spec.Name(), hint, err)
		}
	}
	if err := w.index.Add(w.pending); err != nil {
		return fmt.Errorf("msrag: window %s: %w", w.spec.Name(), err)
	}
	w.pending = w.pending[:0]
	return nil
}

// Finish adds what is queued and hands the indices to a Shard.
func (b *builder) Finish(src *channel.Source) (channel.Shard, error) {
	for _, w := range b.windows {
		if err := w.flush(true); err != nil {
			return nil, err
		}
	}
	sh := &shard{where: src.Where, windows: b.windows, rows: src.Rows, l2: b.params.Metric == faiss.L2, params: &b.params}
	b.windows = nil
	return sh, nil
}

// Close frees the indices unless Finish handed them on.
func (b *builder) Close() error {
	closeWindows(b.windows)
	b.windows = nil
	return nil
}

func closeWindows(ws []*window) {
	for _, w := range ws {
		if w == nil {
			continue
		}
		if w.gpu != nil {
			w.gpu.Close()
		}
		if w.index != nil {
			w.index.Close()
		}
	}
}
