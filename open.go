package msrag

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/store"
)

// OpenOptions says how to open an index.
type OpenOptions struct {
	// Embedder embeds queries; it must be the model the index was built with.
	// Nil: the model the manifest records is opened again (ReopenEmbedder)
	// with EmbedderOptions, and closed by Index.Close; its kind must be
	// registered (import github.com/msrag/msrag/embedders, or the kind's
	// package).
	Embedder Embedder
	// CloseEmbedder makes Index.Close close Embedder too.
	CloseEmbedder bool
	// EmbedderOptions are used when Open opens the model itself: the
	// device, threads, and each kind's own options in Extra (for a model
	// behind a server, a remote.OpenOptions: other endpoints, the API key).
	EmbedderOptions embed.Options
	// SkipVerify skips the sha256 check of the index files (which are
	// hashed as they are read); counts and the model are still checked.
	SkipVerify bool
	// GPUs moves every window's FAISS index to these GPUs (one device, or
	// sharded across several) for search. It needs msrag built with the gpu
	// tag; FAISS on GPUs returns at most faiss.MaxGPUK chunks per window.
	// When Open opens the model itself with EmbedderOptions.Device "cuda" or
	// "auto" and no EmbedderOptions.GPUs, the model also gets one session
	// per GPU.
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
	ix = &Index{dir: dirs[0], emb: opts.Embedder, ownEmb: opts.CloseEmbedder}
	defer func() {
		if err != nil {
			ix.Close()
		}
	}()
	for i, dir := range dirs {
		man, err := store.ReadManifest(dir)
		if err != nil {
			return nil, fmt.Errorf("msrag: %w", err)
		}
		if _, err := ParseEmbedding(man.Embedding); err != nil && !man.Model.None() {
			return nil, fmt.Errorf("msrag: index %s: %w: %w", dir, err, ErrIndexMismatch)
		}
		if i == 0 {
			ix.man, ix.lex = man, lexicalOf(man, dir)
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
	return ix, ix.attachEmbedder(opts, dirs[0])
}

// attachEmbedder sets the index's embedder, opening the manifest's model when
// opts has none, and checks it is the model the index was built with. An
// index without dense windows takes none.
func (ix *Index) attachEmbedder(opts OpenOptions, dir string) error {
	if !ix.Dense() {
		if ix.emb != nil {
			return fmt.Errorf("msrag: index %s has no dense windows (built with --model none): it is searched without an embedder, and was given %s: %w",
				dir, ix.emb.Spec().Name, ErrNoDense)
		}
		return nil
	}
	if ix.emb == nil {
		eo := opts.EmbedderOptions
		if eo.GPUs == nil {
			eo.GPUs = opts.GPUs
		}
		e, err := ReopenEmbedder(context.Background(), ix.man.Model, eo)
		if err != nil {
			return fmt.Errorf("msrag: index %s was built with model %q: %w", dir, ix.man.Model.Name, err)
		}
		ix.emb, ix.ownEmb = e, true
	}
	return checkEmbedder(ix.man, ix.emb, dir)
}

// toGPU replaces every window's index by a copy on the GPUs.
func (ix *Index) toGPU(devices []int) error {
	for _, sh := range ix.shards {
		for _, w := range sh.windows {
			if w.index == nil {
				continue // no dense windows: nothing to move
			}
			g, err := w.index.ToGPU(devices...)
			if err != nil {
				return fmt.Errorf("msrag: moving window %s of %s to GPUs %v: %w", w.spec.Name(), sh.where(), devices, err)
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
	case !sameOrigin(got, want):
		return fmt.Errorf("msrag: index %s was built with prefixes %q/%q and model origin %s %s, this %s uses %q/%q and %s %s: %w",
			dir, want.QueryPrefix, want.PassagePrefix, want.Origin.Kind, want.Origin.Params, got.Name, got.QueryPrefix,
			got.PassagePrefix, got.Origin.Kind, got.Origin.Params, ErrIndexMismatch)
	}
	return nil
}

// sameOrigin reports whether an embedder (got) is the model an index
// records (want) as far as their origins tell, when both have one: the same
// kind, parameters and role prefixes, however each was reached.
func sameOrigin(got, want ModelInfo) bool {
	if got.Origin.Kind == "" || want.Origin.Kind == "" {
		return true
	}
	return got.Origin.Identity() == want.Origin.Identity() &&
		got.QueryPrefix == want.QueryPrefix && got.PassagePrefix == want.PassagePrefix
}

// sameLayout fails unless two shards were built the same way.
func sameLayout(a, b *Manifest, da, db string) error {
	if !a.Model.SameModel(b.Model) {
		return fmt.Errorf("msrag: shards %s and %s were built with different models (%s, %s): %w", da, db, a.Model.Name, b.Model.Name, ErrIndexMismatch)
	}
	if ea, eb := embeddingOf(a), embeddingOf(b); ea != eb {
		return fmt.Errorf("msrag: shards %s and %s were embedded differently (%s, %s); search them apart: %w", da, db, ea, eb, ErrIndexMismatch)
	}
	if ba, bb := recordedBatching(a), recordedBatching(b); ba != bb {
		return fmt.Errorf("msrag: shards %s and %s were embedded with different batching (%s, %s), so their vectors are not comparable for a dynamically quantized model; rebuild one with --batching %s: %w",
			da, db, ba, bb, ba, ErrIndexMismatch)
	}
	if a.Metric != b.Metric {
		return fmt.Errorf("msrag: shards %s and %s have different windows or metrics: %w", da, db, ErrIndexMismatch)
	}
	if d := layoutOf(a.Windows).Diff(layoutOf(b.Windows)); !d.Same() || d.Reordered {
		return fmt.Errorf("msrag: shards %s and %s have different windows: %w", da, db, ErrIndexMismatch)
	}
	return sameLexical(a, b, da, db)
}

// embeddingOf describes how an index's windows were embedded: the mode,
// and a late index's segments.
func embeddingOf(m *Manifest) string {
	e, err := ParseEmbedding(m.Embedding)
	if err != nil {
		return m.Embedding
	}
	if l := m.Late; l != nil {
		return fmt.Sprintf("%s (segments of %d tokens, overlap %d, edges %s)", e, l.SegmentTokens, l.Overlap, l.Edges)
	}
	return e.String()
}

// openShard reads one index directory, checking every file against the
// manifest as it is read.
func openShard(dir string, man *Manifest, skipVerify bool) (_ *shard, err error) {
	sh := &shard{dir: dir}
	defer func() {
		if err != nil {
			closeWindows(sh.windows)
		}
	}()
	sum := func(s string) string {
		if skipVerify {
			return ""
		}
		return s
	}
	var data []byte
	if err := store.ReadFile(dir, man.DocsFile, sum(man.DocsSHA256), store.ReadAll(&data)); err != nil {
		return nil, fmt.Errorf("msrag: index %s: %w", dir, err)
	}
	if sh.ids, sh.titles, err = store.ReadDocTable(data); err != nil {
		return nil, fmt.Errorf("msrag: index %s: %s: %w", dir, man.DocsFile, err)
	}
	if int64(len(sh.ids)) != man.Docs {
		return nil, fmt.Errorf("msrag: index %s: %s has %d documents, the manifest says %d: %w", dir, man.DocsFile, len(sh.ids), man.Docs, ErrIndexMismatch)
	}
	for _, wi := range man.Windows {
		w := &window{spec: windowOf(wi)}
		sh.windows = append(sh.windows, w)
		if err := w.read(dir, man, wi, sum); err != nil {
			return nil, fmt.Errorf("msrag: index %s: window %s: %w", dir, w.spec.Name(), err)
		}
	}
	if man.Lexical != nil {
		if err := readLexical(dir, man, sh, sum); err != nil {
			return nil, err
		}
	}
	return sh, nil
}

// readFAISS reads a window's FAISS index and checks it against the
// manifest.
func (w *window) readFAISS(dir string, man *Manifest, wi WindowInfo, sum func(string) string) error {
	err := store.ReadFile(dir, wi.IndexFile, sum(wi.IndexSHA256), func(r io.Reader, size int64) (err error) {
		w.index, err = faiss.ReadFrom(r, size)
		return err
	})
	if err != nil {
		return err
	}
	if w.index.Ntotal() != wi.Vectors || w.index.Dim() != man.Model.Dims {
		return fmt.Errorf("%s holds %d vectors of %d dims, the manifest says %d of %d: %w", wi.IndexFile, w.index.Ntotal(), w.index.Dim(), wi.Vectors, man.Model.Dims, ErrIndexMismatch)
	}
	return nil
}

// read reads a window's FAISS index (none in an index without dense
// windows) and chunk table and checks them against the manifest.
func (w *window) read(dir string, man *Manifest, wi WindowInfo, sum func(string) string) error {
	if !man.Model.None() {
		if err := w.readFAISS(dir, man, wi, sum); err != nil {
			return err
		}
	}
	var data []byte
	if err := store.ReadFile(dir, wi.ChunksFile, sum(wi.ChunkSHA256), store.ReadAll(&data)); err != nil {
		return err
	}
	var err error
	if w.chunks, err = store.ReadChunkTable(data); err != nil {
		return fmt.Errorf("%s: %w", wi.ChunksFile, err)
	}
	if int64(w.chunks.Len()) != wi.Vectors {
		return fmt.Errorf("%s has %d rows for %d vectors: %w", wi.ChunksFile, w.chunks.Len(), wi.Vectors, ErrIndexMismatch)
	}
	for r, d := range w.chunks.Doc {
		if d < 0 || int64(d) >= man.Docs {
			return fmt.Errorf("%s row %d names document %d of %d: %w", wi.ChunksFile, r, d, man.Docs, ErrIndexMismatch)
		}
	}
	return nil
}
