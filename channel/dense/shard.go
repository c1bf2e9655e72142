package dense

import (
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/indexfile"
)

// shard is one shard's dense windows: a FAISS index per window, its rows
// those of the window's chunk table.
type shard struct {
	where   string
	windows []*window
	rows    []channel.RowMap
	l2      bool    // the indices rank by L2 distance: scores are its negatives
	params  *Params // a shard just built: what it was built with
}

// Open reads every window's FAISS index and checks it against the
// manifest.
func (kind) Open(src *channel.Source) (channel.Shard, error) {
	m := src.Manifest
	sh := &shard{where: src.Where, rows: src.Rows, l2: m.Metric == faiss.L2.String()}
	for i, wi := range m.Windows {
		w := &window{spec: src.Windows[i]}
		sh.windows = append(sh.windows, w)
		if err := w.read(src, wi); err != nil {
			sh.Close()
			return nil, fmt.Errorf("window %s: %w", w.spec.Name(), err)
		}
	}
	return sh, nil
}

func (w *window) read(src *channel.Source, wi indexfile.WindowInfo) error {
	err := src.Read(wi.IndexFile, wi.IndexSHA256, func(r io.Reader, size int64) (err error) {
		w.index, err = faiss.ReadFrom(r, size)
		return err
	})
	if err != nil {
		return err
	}
	if dims := src.Manifest.Model.Dims; w.index.Ntotal() != wi.Vectors || w.index.Dim() != dims {
		return fmt.Errorf("%s holds %d vectors of %d dims, the manifest says %d of %d: %w",
			wi.IndexFile, w.index.Ntotal(), w.index.Dim(), wi.Vectors, dims, indexfile.ErrMismatch)
	}
	return nil
}

// Stats: dense scores need no corpus statistics.
func (*shard) Stats(*channel.Queries) (channel.Stats, error) { return nil, nil }

// Search searches every window (in parallel) for each query's k best
// chunks. The scores of a flat index are rescored one pair at a time
// (faiss.Index.Rescore), so that they depend neither on the batch nor on
// how the corpus was split into shards.
func (sh *shard) Search(ctx context.Context, q *channel.Queries, _ channel.Stats, k int) ([]channel.Hits, error) {
	if len(sh.windows) == 0 {
		return nil, nil
	}
	if err := q.CheckVectors(sh.windows[0].index.Dim()); err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	if k > faiss.MaxGPUK && sh.OnGPU() {
		return nil, fmt.Errorf("msrag: window k %d is more than FAISS on GPUs returns (%d); search with a smaller window k", k, faiss.MaxGPUK)
	}
	out := make([]channel.Hits, len(sh.windows))
	g, gctx := errgroup.WithContext(ctx)
	for wi, w := range sh.windows {
		g.Go(func() error {
			h, err := channel.Top(gctx, q.Len(), k, sh.rows[wi], func(qs []int, n int) ([]int32, []float32, error) {
				return sh.search(w, q, qs, n)
			})
			if err != nil {
				return fmt.Errorf("msrag: window %s: %w", w.spec.Name(), err)
			}
			out[wi] = h
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// search returns the n best rows of window w for the queries qs, rescored
// on a flat index. On GPUs the copy there finds them (at most
// faiss.MaxGPUK, the rest empty) and the index in main memory rescores
// them, so that their scores, and the order channel.Top gives them, are the
// CPU search's.
func (sh *shard) search(w *window, q *channel.Queries, qs []int, n int) ([]int32, []float32, error) {
	vecs := make([]float32, 0, len(qs)*q.Dims)
	for _, i := range qs {
		vecs = append(vecs, q.Vector(i)...)
	}
	kk, engine := n, w.index
	if w.gpu != nil {
		kk, engine = min(n, faiss.MaxGPUK), w.gpu
	}
	dist, labels, err := engine.Search(vecs, kk)
	if err == nil && w.index.Flat() {
		dist, err = w.index.Rescore(vecs, labels, kk)
	}
	if err != nil {
		return nil, nil, err
	}
	rows, scores := make([]int32, len(qs)*n), make([]float32, len(qs)*n)
	for i := range qs {
		for j := range n {
			o := i*n + j
			rows[o] = -1
			if j >= kk || labels[i*kk+j] < 0 {
				continue
			}
			rows[o], scores[o] = int32(labels[i*kk+j]), dist[i*kk+j]
			if sh.l2 {
				scores[o] = -scores[o]
			}
		}
	}
	return rows, scores, nil
}

// Write writes every window's FAISS index and records its file and sha256
// in the manifest's windows, with the factory and metric it was built
// with; with no dst, only the files' names.
func (sh *shard) Write(dst channel.Dest, man *indexfile.Manifest) error {
	if sh.params != nil {
		man.Factory, man.Metric = sh.params.Factory, sh.params.Metric.String()
	}
	for i, w := range sh.windows {
		wi := &man.Windows[i]
		wi.IndexFile = w.spec.Name() + ".faiss"
		if dst == nil {
			continue
		}
		var err error
		if wi.IndexSHA256, err = dst.Create(wi.IndexFile, func(out io.Writer) error { _, err := w.index.WriteTo(out); return err }); err != nil {
			return fmt.Errorf("msrag: window %s: %w", w.spec.Name(), err)
		}
	}
	return nil
}

// Close frees the FAISS indices; it is safe to call twice.
func (sh *shard) Close() error {
	closeWindows(sh.windows)
	sh.windows = nil
	return nil
}

// OnGPU reports whether the windows are searched on GPUs.
func (sh *shard) OnGPU() bool {
	return len(sh.windows) > 0 && sh.windows[0].gpu != nil
}

// ToGPU copies every window's index to the GPUs (one device, or sharded
// across several), where it is searched from then on. The index stays in
// main memory too: a flat index rescores there what the GPUs found (see
// search). A shard already on GPUs is left as it is.
func (sh *shard) ToGPU(devices []int) error {
	if sh.OnGPU() {
		return nil
	}
	for _, w := range sh.windows {
		g, err := w.index.ToGPU(devices...)
		if err != nil {
			sh.dropGPU()
			return fmt.Errorf("moving window %s of %s to GPUs %v: %w", w.spec.Name(), sh.where, devices, err)
		}
		w.gpu = g
	}
	return nil
}

// dropGPU frees the windows' copies on GPUs; the shard searches on the CPU
// again.
func (sh *shard) dropGPU() {
	for _, w := range sh.windows {
		if w.gpu != nil {
			w.gpu.Close()
			w.gpu = nil
		}
	}
}

// IndexOf returns the FAISS index of window wi of a dense part of a shard,
// nil when p is not one: for tests and tools that read the engine itself.
// It stays p's.
func IndexOf(p channel.Shard, wi int) *faiss.Index {
	sh, ok := p.(*shard)
	if !ok || wi < 0 || wi >= len(sh.windows) {
		return nil
	}
	return sh.windows[wi].index
}
