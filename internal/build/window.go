package build

import (
	"fmt"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/lexical"
)

// Window is one window being filled: its FAISS index, the table of the
// chunks behind its vectors, the vectors not yet added, and in a Lexical
// build the lexical index of the same chunk rows.
type Window struct {
	Spec chunk.Window
	// Index is the window's FAISS index; nil in a build without an
	// embedder.
	Index  *faiss.Index
	Chunks *store.ChunkTable
	// Lexical is the window's lexical index once Run has built it (nil
	// without lexical windows); row r is row r of Chunks.
	Lexical *lexical.Index

	lex *lexical.Builder // the lexical rows being added

	pending []float32 // vectors waiting to be added (or to train the index)
}

// addBlock is how many vectors a trained index takes at once.
const addBlock = 4096

// push queues v for the window's index, adding in blocks and training the index
// on the first trainSize vectors when it needs training.
func (w *Window) push(v []float32, trainSize int) error {
	w.pending = append(w.pending, v...)
	dims := w.Index.Dim()
	if !w.Index.IsTrained() {
		if len(w.pending)/dims < trainSize {
			return nil
		}
	} else if len(w.pending)/dims < addBlock {
		return nil
	}
	return w.flush(false)
}

// flush trains the index if needed and adds the queued vectors.
func (w *Window) flush(final bool) error {
	if len(w.pending) == 0 {
		return nil
	}
	if !w.Index.IsTrained() {
		if err := w.Index.Train(w.pending); err != nil {
			n := len(w.pending) / w.Index.Dim()
			hint := ""
			if final {
				hint = fmt.Sprintf(" (only %d vectors to train on: use a smaller index or Flat)", n)
			}
			return fmt.Errorf("msrag: window %s: training the index%s: %w", w.Spec.Name(), hint, err)
		}
	}
	if err := w.Index.Add(w.pending); err != nil {
		return fmt.Errorf("msrag: window %s: %w", w.Spec.Name(), err)
	}
	w.pending = w.pending[:0]
	return nil
}

// CloseWindows frees the windows' FAISS indices.
func CloseWindows(ws []*Window) {
	for _, w := range ws {
		if w != nil && w.Index != nil {
			w.Index.Close()
		}
	}
}
