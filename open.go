package msrag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
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
	// Kinds, when set, opens only the parts of these kinds of channel (and
	// the model only when one of them needs query vectors): a search of
	// them alone, or a phase of a scatter-gather search, then holds no more
	// of the index than it reads. The other kinds' channels stay in the
	// layout, and a fusion of them is refused. An empty list opens the
	// documents alone, which fuse chunk lists searched elsewhere (the
	// gather of a scatter-gather search).
	Kinds []ChannelKind
	// NoEmbedder opens no model: the queries come embedded
	// (Index.SearchVectors, a task of a scatter-gather search: OpenShard).
	NoEmbedder bool
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
func OpenWith(opts OpenOptions, dirs ...string) (*Index, error) {
	if err := CheckGPUs(opts.GPUs, 0); err != nil {
		return nil, err // before the index is read
	}
	s, err := ReadShards(dirs...)
	if err != nil {
		return nil, err
	}
	return OpenShards(opts, s)
}

// Shards are the manifests of the shards of one index (one directory: an
// index of one shard), each read once and checked to be of one index
// (checkShard) and parts of one corpus (checkParts): what OpenShards opens
// without reading them again, and what every phase of a scatter-gather
// search reads once.
type Shards struct {
	Dirs      []string
	Manifests []*Manifest
}

// ReadShards reads and checks the manifests of the shards in dirs.
func ReadShards(dirs ...string) (*Shards, error) {
	if len(dirs) == 0 {
		return nil, errors.New("msrag: no index directory given")
	}
	mans := make([]*Manifest, len(dirs))
	for i, dir := range dirs {
		man, err := readManifest(dir)
		if err != nil {
			return nil, fmt.Errorf("msrag: %w", err)
		}
		if _, err := ParseEmbedding(man.Embedding); err != nil && !man.Model.None() {
			return nil, fmt.Errorf("msrag: index %s: %w: %w", dir, err, ErrIndexMismatch)
		}
		if i > 0 {
			if err := checkShard(mans[0], man, dirs[0], dir); err != nil {
				return nil, err
			}
		}
		mans[i] = man
	}
	if err := checkParts(mans, dirs); err != nil {
		return nil, err
	}
	return &Shards{Dirs: slices.Clone(dirs), Manifests: mans}, nil
}

// readManifest reads and checks an index directory's manifest
// (store.ReadManifest); tests count its calls.
var readManifest = store.ReadManifest

// Shard returns shard i alone, with its manifest as read.
func (s *Shards) Shard(i int) *Shards {
	return &Shards{Dirs: s.Dirs[i : i+1 : i+1], Manifests: s.Manifests[i : i+1 : i+1]}
}

// MaxChannelK returns the most rows any channel holds over the shards (a
// window's chunks, or the documents; at least 1): the longest list any
// channel of them can give.
func (s *Shards) MaxChannelK() int { return maxChannelK(s.Manifests) }

// OpenShards opens the shards s as one index, as OpenWith opens their
// directories, from the manifests s holds: they are not read again.
func OpenShards(opts OpenOptions, s *Shards) (ix *Index, err error) {
	if s == nil || len(s.Dirs) == 0 || len(s.Manifests) != len(s.Dirs) {
		return nil, errors.New("msrag: no index directory given")
	}
	if err := CheckGPUs(opts.GPUs, 0); err != nil {
		return nil, err
	}
	ix = &Index{dir: s.Dirs[0], emb: opts.Embedder, ownEmb: opts.CloseEmbedder}
	defer func() {
		if err != nil {
			ix.Close()
		}
	}()
	ix.man = s.Manifests[0]
	kinds, err := channel.KindsOf(ix.man)
	if err != nil {
		return nil, fmt.Errorf("msrag: index %s: %w", s.Dirs[0], err)
	}
	ix.setKinds(kinds)
	for i, dir := range s.Dirs {
		sh, err := openShard(dir, s.Manifests[i], windowsOf(ix.man), ix.kinds, ix.openKinds(opts), opts.SkipVerify)
		if err != nil {
			return nil, err
		}
		ix.shards = append(ix.shards, sh)
	}
	if err := ix.indexDocs(); err != nil {
		return nil, err
	}
	if len(opts.GPUs) > 0 {
		if err := ix.ToGPU(opts.GPUs); err != nil {
			return nil, err
		}
	}
	if opts.NoEmbedder || opts.Kinds != nil && !ix.opened(channel.QueryVectors) {
		return ix, nil // no model needed: a given one is the caller's to close
	}
	return ix, ix.attachEmbedder(opts, s.Dirs[0])
}

// openKinds returns, parallel to the index's kinds, whether opts opens each.
func (ix *Index) openKinds(opts OpenOptions) []bool {
	out := make([]bool, len(ix.kinds))
	for i, k := range ix.kinds {
		out[i] = opts.Kinds == nil || slices.Contains(opts.Kinds, k)
	}
	return out
}

// opened reports whether a kind that needs n is open in the first shard.
func (ix *Index) opened(n channel.Needs) bool {
	for i, k := range ix.kinds {
		if k.Needs().Has(n) && len(ix.shards) > 0 && ix.shards[0].parts[i] != nil {
			return true
		}
	}
	return false
}

// attachEmbedder sets the index's embedder, opening the manifest's model when
// opts has none, and checks it is the model the index was built with. An
// index without a model takes none.
func (ix *Index) attachEmbedder(opts OpenOptions, dir string) error {
	if !ix.HasModel() {
		if ix.emb != nil {
			return fmt.Errorf("msrag: index %s has no model (built with --model none): it is searched without an embedder, and was given %s: %w",
				dir, ix.emb.Spec().Name, ErrNoModel)
		}
		return nil
	}
	if ix.emb == nil {
		e, err := ReopenEmbedder(context.Background(), ix.man.Model, modelOptions(opts, ix.man.Model))
		if err != nil {
			return fmt.Errorf("msrag: index %s was built with model %q: %w", dir, ix.man.Model.Name, err)
		}
		ix.emb, ix.ownEmb = e, true
	}
	return CheckEmbedder(ix.man, ix.emb, dir)
}

// modelOptions returns the options the model m is opened with: the
// EmbedderOptions, with the FAISS indices' GPUs when they choose none and
// the model runs on CUDA ("cuda" or "auto").
func modelOptions(opts OpenOptions, m ModelInfo) embed.Options {
	eo := opts.EmbedderOptions
	if eo.GPUs == nil && (eo.Device == embed.DeviceCUDA || eo.Device == embed.DeviceAuto) && EmbedderDevices(m) {
		eo.GPUs = opts.GPUs
	}
	return eo
}

// gpuMover is a kind's part of a shard that can move to GPUs (FAISS
// indices).
type gpuMover interface {
	ToGPU(devices []int) error
}

// ToGPU copies every window's FAISS index to the GPUs (one device,
// or sharded across several), where the index is searched from then on, as
// OpenOptions.GPUs does when opening: for an index Build returned, whose
// vectors were added on the CPU. The indices stay in main memory too, where
// a flat index rescores the chunks the GPUs found one pair at a time, so
// that the scores, and the rankings with their ties, are the CPU search's.
// Windows of other kinds stay where they are. It needs msrag built with the
// gpu tag (CheckGPUs); an index already on GPUs is left as it is.
func (ix *Index) ToGPU(devices []int) error {
	if err := CheckGPUs(devices, 0); err != nil {
		return err
	}
	for _, sh := range ix.shards {
		for _, p := range sh.parts {
			if g, ok := p.(gpuMover); ok {
				if err := g.ToGPU(devices); err != nil {
					return fmt.Errorf("msrag: %w", err)
				}
			}
		}
	}
	return nil
}

// CheckGPUs says, before any work, whether FAISS windows can be searched
// on gpus (none: on the CPU, always possible) with channelK chunks a window
// (0: not known yet): it fails, wrapping faiss.ErrArgument, when channelK
// is more than FAISS returns on GPUs (faiss.MaxGPUK), and wrapping
// faiss.ErrGPUUnavailable when msrag was built without FAISS GPU support.
func CheckGPUs(gpus []int, channelK int) error {
	switch {
	case len(gpus) == 0:
		return nil
	case channelK > faiss.MaxGPUK:
		return fmt.Errorf("msrag: window k %d is more than FAISS on GPUs returns (%d): %w", channelK, faiss.MaxGPUK, faiss.ErrArgument)
	case !faiss.GPUAvailable:
		return fmt.Errorf("msrag: FAISS on GPUs %v: %w: build msrag with FAISS GPU support (make build GPU=1), or search on the CPU", gpus, faiss.ErrGPUUnavailable)
	}
	return nil
}

// CheckEmbedder fails unless emb is the model the index in dir, of the
// manifest man, was built with.
func CheckEmbedder(man *Manifest, emb Embedder, dir string) error {
	got := modelInfoOf(emb)
	want := man.Model
	switch {
	case got.Name != want.Name:
		return fmt.Errorf("msrag: index %s was built with model %q, not %q: %w", dir, want.Name, got.Name, ErrIndexMismatch)
	case got.Precision != want.Precision:
		return fmt.Errorf("msrag: index %s was embedded with model %s in %s, this %s runs in %s: search it in %s (--fp16 for fp16, without it for fp32): %w",
			dir, want.Name, want.PrecisionName(), got.Name, got.PrecisionName(), want.PrecisionName(), ErrIndexMismatch)
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

// openShard reads one index directory: its documents and chunk tables,
// then every kind's part, each file checked against the manifest as it is
// read.
func openShard(dir string, man *Manifest, windows []chunk.Window, kinds []channel.Kind, open []bool, skipVerify bool) (_ *shard, err error) {
	sh := &shard{dir: dir, man: man, specs: windows}
	defer func() {
		if err != nil {
			sh.close()
		}
	}()
	read := func(name, sha string, fn func(io.Reader, int64) error) error {
		if skipVerify {
			sha = ""
		}
		return store.ReadFile(dir, name, sha, fn)
	}
	var data []byte
	if err := read(man.DocsFile, man.DocsSHA256, store.ReadAll(&data)); err != nil {
		return nil, fmt.Errorf("msrag: index %s: %w", dir, err)
	}
	if sh.ids, sh.titles, err = store.ReadDocTable(data); err != nil {
		return nil, fmt.Errorf("msrag: index %s: %s: %w", dir, man.DocsFile, err)
	}
	if int64(len(sh.ids)) != man.Docs {
		return nil, fmt.Errorf("msrag: index %s: %s has %d documents, the manifest says %d: %w", dir, man.DocsFile, len(sh.ids), man.Docs, ErrIndexMismatch)
	}
	sh.parts = make([]channel.Shard, len(kinds))
	if !slices.Contains(open, true) {
		return sh, nil // the documents alone
	}
	for i, wi := range man.Windows {
		t, err := readChunkTable(wi, man.Docs, read)
		if err != nil {
			return nil, fmt.Errorf("msrag: index %s: window %s: %w", dir, windows[i].Name(), err)
		}
		sh.tables = append(sh.tables, t)
	}
	src := sh.source(man, windows)
	src.Read = read
	for i, k := range kinds {
		if !open[i] {
			continue
		}
		if sh.parts[i], err = k.Open(src); err != nil {
			return nil, fmt.Errorf("msrag: index %s: %w", dir, err)
		}
	}
	return sh, nil
}

// readChunkTable reads a window's chunk table and checks it against the
// manifest.
func readChunkTable(wi WindowInfo, docs int64, read func(string, string, func(io.Reader, int64) error) error) (*store.ChunkTable, error) {
	var data []byte
	if err := read(wi.ChunksFile, wi.ChunkSHA256, store.ReadAll(&data)); err != nil {
		return nil, err
	}
	t, err := store.ReadChunkTable(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", wi.ChunksFile, err)
	}
	if int64(t.Len()) != wi.Vectors {
		return nil, fmt.Errorf("%s has %d rows for %d vectors: %w", wi.ChunksFile, t.Len(), wi.Vectors, ErrIndexMismatch)
	}
	for r, d := range t.Doc {
		if d < 0 || int64(d) >= docs {
			return nil, fmt.Errorf("%s row %d names document %d of %d: %w", wi.ChunksFile, r, d, docs, ErrIndexMismatch)
		}
	}
	return t, nil
}
