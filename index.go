package msrag

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/onnx"
)

// Index is a multi-scale index: for each window size a FAISS index and the table
// of the chunks behind its vectors, over one or more shards. Search is safe for
// concurrent use; Close must not run concurrently with it.
type Index struct {
	dir    string // first shard's directory; empty for an index kept in memory
	man    *Manifest
	emb    Embedder
	ownEmb bool // Close closes emb (Open made it)
	shards []*shard

	// ids holds every document id over all shards, sorted: a document's index
	// in search results is its position here, so rankings (ties included) do
	// not depend on how the corpus was split into shards.
	ids []string
}

// shard is one index directory: its documents and windows. Document i of the
// shard is document gidx[i] of the Index.
type shard struct {
	dir     string
	ids     []string
	titles  []string
	gidx    []int32
	windows []*window
}

// indexDocs sorts the document ids of all shards and numbers each shard's
// documents by their place in that order. It fails on an id found twice.
func (ix *Index) indexDocs() error {
	type ref struct{ s, i int32 }
	var refs []ref
	for s, sh := range ix.shards {
		for i := range sh.ids {
			refs = append(refs, ref{int32(s), int32(i)})
		}
	}
	id := func(r ref) string { return ix.shards[r.s].ids[r.i] }
	slices.SortFunc(refs, func(a, b ref) int { return strings.Compare(id(a), id(b)) })
	ix.ids = make([]string, len(refs))
	for _, sh := range ix.shards {
		sh.gidx = make([]int32, len(sh.ids))
	}
	for g, r := range refs {
		if g > 0 && id(r) == ix.ids[g-1] {
			prev := refs[g-1]
			return fmt.Errorf("msrag: document id %q is in %s and %s: %w", id(r), ix.shards[prev.s].where(), ix.shards[r.s].where(), ErrIndexMismatch)
		}
		ix.ids[g] = id(r)
		ix.shards[r.s].gidx[r.i] = int32(g)
	}
	return nil
}

func (sh *shard) where() string {
	if sh.dir == "" {
		return "the index"
	}
	return sh.dir
}

// window is one window size of a shard.
type window struct {
	size, stride int
	full         bool // the full-document window (Config.Full)
	index        *faiss.Index
	chunks       *chunkTable

	pending []float32 // vectors waiting to be added (or to train the index)
}

// push queues v for the window's index, adding in blocks and training the index
// on the first trainSize vectors when it needs training.
func (w *window) push(v []float32, trainSize int) error {
	w.pending = append(w.pending, v...)
	dims := w.index.Dim()
	if !w.index.IsTrained() {
		if len(w.pending)/dims < trainSize {
			return nil
		}
	} else if len(w.pending)/dims < 4096 {
		return nil
	}
	return w.flush(false)
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
			return fmt.Errorf("msrag: window %d: training the index%s: %w", w.size, hint, err)
		}
	}
	if err := w.index.Add(w.pending); err != nil {
		return fmt.Errorf("msrag: window %d: %w", w.size, err)
	}
	w.pending = w.pending[:0]
	return nil
}

func closeWindows(ws []*window) {
	for _, w := range ws {
		if w != nil && w.index != nil {
			w.index.Close()
		}
	}
}

// Manifest returns a copy of the index's manifest (the first shard's, for a
// sharded index).
func (ix *Index) Manifest() Manifest {
	m := *ix.man
	m.Windows = slices.Clone(m.Windows)
	return m
}

// Windows returns the window sizes, in index order (the full-document window,
// if any, is not among them: see HasFull).
func (ix *Index) Windows() []int {
	var out []int
	for _, w := range ix.man.Windows {
		if !w.Full {
			out = append(out, w.Size)
		}
	}
	return out
}

// HasFull reports whether the index has the full-document window (Config.Full).
func (ix *Index) HasFull() bool {
	for _, w := range ix.man.Windows {
		if w.Full {
			return true
		}
	}
	return false
}

// NumDocs returns the number of documents over all shards.
func (ix *Index) NumDocs() int { return len(ix.ids) }

// DocID returns the id of document i (0 <= i < NumDocs()). Documents are
// numbered in the order of their ids.
func (ix *Index) DocID(i int) string { return ix.ids[i] }

// Embedder returns the embedder the index searches with.
func (ix *Index) Embedder() Embedder { return ix.emb }

// Dir returns the directory the index was opened from or written to.
func (ix *Index) Dir() string { return ix.dir }

// Close frees the FAISS indices (and the embedder when Open created it). It is
// safe to call twice.
func (ix *Index) Close() error {
	if ix == nil {
		return nil
	}
	for _, s := range ix.shards {
		closeWindows(s.windows)
		s.windows = nil
	}
	if ix.ownEmb {
		if c, ok := ix.emb.(interface{ Close() error }); ok {
			c.Close()
		}
		ix.ownEmb = false
	}
	return nil
}

// OpenOptions says how to open an index.
type OpenOptions struct {
	// Embedder embeds queries; it must be the model the index was built with.
	// Nil: the model named in the manifest is opened from the model cache
	// (onnx.ResolveModel) with EmbedderOptions.
	Embedder Embedder
	// EmbedderOptions are used when Open opens the model itself.
	EmbedderOptions onnx.Options
	// SkipVerify skips the sha256 check of the index files (which reads them
	// whole); counts and the model are still checked.
	SkipVerify bool
	// GPUs moves every window's FAISS index to these GPUs (one device, or
	// sharded across several) for search. It needs msrag built with the gpu
	// tag; FAISS on GPUs returns at most faiss.MaxGPUK chunks per window.
	// When Open opens the model itself with EmbedderOptions.Device "cuda" or
	// "auto", the model also gets one session per GPU (OpenEmbedder).
	GPUs []int
}

// Open opens the index in dir with the model named in its manifest.
func Open(dir string) (*Index, error) { return OpenWith(OpenOptions{}, dir) }

// OpenWith opens one index directory, or several shards built from parts of one
// corpus with the same model and windows, searched as one index: each window's
// results are merged by score across shards before fusion, which ranks exactly as
// one index over the whole corpus would with an exact (Flat) index.
func OpenWith(opts OpenOptions, dirs ...string) (ix *Index, err error) {
	if len(dirs) == 0 {
		return nil, errors.New("msrag: no index directory given")
	}
	ix = &Index{dir: dirs[0]}
	defer func() {
		if err != nil {
			ix.Close()
		}
	}()
	for i, dir := range dirs {
		man, err := readManifest(dir)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			ix.man = man
		} else if err := sameLayout(ix.man, man, dirs[0], dir); err != nil {
			return nil, err
		}
		sh, err := openShard(dir, man, opts.SkipVerify)
		if err != nil {
			return nil, err
		}
		ix.shards = append(ix.shards, sh)
	}
	if err := ix.indexDocs(); err != nil {
		return nil, err
	}
	if len(opts.GPUs) > 0 {
		if err := ix.toGPU(opts.GPUs); err != nil {
			return nil, err
		}
	}
	ix.emb = opts.Embedder
	if ix.emb == nil {
		e, err := OpenEmbedder(ix.man.Model.Name, opts.EmbedderOptions, opts.GPUs...)
		if err != nil {
			return nil, fmt.Errorf("msrag: index %s was built with model %q: %w", dirs[0], ix.man.Model.Name, err)
		}
		ix.emb, ix.ownEmb = e, true
	}
	if err := checkEmbedder(ix.man, ix.emb, dirs[0]); err != nil {
		return nil, err
	}
	return ix, nil
}

// toGPU replaces every window's index by a copy on the GPUs.
func (ix *Index) toGPU(devices []int) error {
	for _, sh := range ix.shards {
		for _, w := range sh.windows {
			g, err := w.index.ToGPU(devices...)
			if err != nil {
				return fmt.Errorf("msrag: moving window %d of %s to GPUs %v: %w", w.size, sh.where(), devices, err)
			}
			w.index.Close()
			w.index = g
		}
	}
	return nil
}

// checkEmbedder fails unless emb is the model the index was built with.
func checkEmbedder(man *Manifest, emb Embedder, dir string) error {
	got := modelInfoOf(emb)
	want := man.Model
	switch {
	case got.Name != want.Name:
		return fmt.Errorf("msrag: index %s was built with model %q, not %q: %w", dir, want.Name, got.Name, ErrIndexMismatch)
	case got.ModelSHA256 != want.ModelSHA256:
		return fmt.Errorf("msrag: index %s was built with model file sha256 %s, this %s has %s: %w", dir, want.ModelSHA256, got.Name, got.ModelSHA256, ErrIndexMismatch)
	case got.TokenizerSHA256 != want.TokenizerSHA256:
		return fmt.Errorf("msrag: index %s was built with tokenizer sha256 %s, this %s has %s: %w", dir, want.TokenizerSHA256, got.Name, got.TokenizerSHA256, ErrIndexMismatch)
	case got.Dims != want.Dims:
		return fmt.Errorf("msrag: index %s has %d dims, model %s gives %d: %w", dir, want.Dims, got.Name, got.Dims, ErrIndexMismatch)
	}
	return nil
}

// sameLayout fails unless two shards were built the same way.
func sameLayout(a, b *Manifest, da, db string) error {
	if a.Model != b.Model {
		return fmt.Errorf("msrag: shards %s and %s were built with different models (%s, %s): %w", da, db, a.Model.Name, b.Model.Name, ErrIndexMismatch)
	}
	if a.Metric != b.Metric || len(a.Windows) != len(b.Windows) {
		return fmt.Errorf("msrag: shards %s and %s have different windows or metrics: %w", da, db, ErrIndexMismatch)
	}
	for i := range a.Windows {
		if a.Windows[i].Size != b.Windows[i].Size || a.Windows[i].Stride != b.Windows[i].Stride || a.Windows[i].Full != b.Windows[i].Full {
			return fmt.Errorf("msrag: shards %s and %s have different windows: %w", da, db, ErrIndexMismatch)
		}
	}
	return nil
}

// openShard reads one index directory and checks it against its manifest.
func openShard(dir string, man *Manifest, skipVerify bool) (_ *shard, err error) {
	sh := &shard{dir: dir}
	defer func() {
		if err != nil {
			closeWindows(sh.windows)
		}
	}()
	if !skipVerify {
		if err := checkFile(dir, man.DocsFile, man.DocsSHA256); err != nil {
			return nil, err
		}
	}
	if sh.ids, sh.titles, err = readDocTable(filepath.Join(dir, man.DocsFile)); err != nil {
		return nil, err
	}
	if int64(len(sh.ids)) != man.Docs {
		return nil, fmt.Errorf("msrag: index %s: %s has %d documents, the manifest says %d: %w", dir, man.DocsFile, len(sh.ids), man.Docs, ErrIndexMismatch)
	}
	for _, wi := range man.Windows {
		if !skipVerify {
			if err := checkFile(dir, wi.IndexFile, wi.IndexSHA256); err != nil {
				return nil, err
			}
			if err := checkFile(dir, wi.ChunksFile, wi.ChunkSHA256); err != nil {
				return nil, err
			}
		}
		fi, err := faiss.ReadFile(filepath.Join(dir, wi.IndexFile))
		if err != nil {
			return nil, fmt.Errorf("msrag: index %s: window %d: %w", dir, wi.Size, err)
		}
		w := &window{size: wi.Size, stride: wi.Stride, full: wi.Full, index: fi}
		sh.windows = append(sh.windows, w)
		if fi.Ntotal() != wi.Vectors || fi.Dim() != man.Model.Dims {
			return nil, fmt.Errorf("msrag: index %s: %s holds %d vectors of %d dims, the manifest says %d of %d: %w", dir, wi.IndexFile, fi.Ntotal(), fi.Dim(), wi.Vectors, man.Model.Dims, ErrIndexMismatch)
		}
		if w.chunks, err = readChunkTable(filepath.Join(dir, wi.ChunksFile)); err != nil {
			return nil, err
		}
		if int64(w.chunks.len()) != wi.Vectors {
			return nil, fmt.Errorf("msrag: index %s: %s has %d rows for %d vectors: %w", dir, wi.ChunksFile, w.chunks.len(), wi.Vectors, ErrIndexMismatch)
		}
		for r, d := range w.chunks.Doc {
			if d < 0 || int64(d) >= man.Docs {
				return nil, fmt.Errorf("msrag: index %s: %s row %d names document %d of %d: %w", dir, wi.ChunksFile, r, d, man.Docs, ErrIndexMismatch)
			}
		}
	}
	return sh, nil
}
