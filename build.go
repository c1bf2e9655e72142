package msrag

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/build"
	"github.com/msrag/msrag/internal/store"
)

// Build reads every document from src, cuts it into every window, embeds each
// unique chunk once and adds it to the index of every window it belongs to.
// With cfg.Out set the index is written there (see Config.Out) and the
// returned Index is backed by it. The caller still owns and closes src.
func Build(ctx context.Context, src corpus.Reader, cfg Config) (*Index, error) {
	ix, _, err := BuildWithStats(ctx, src, cfg)
	return ix, err
}

// BuildWithStats is Build, also returning what the build did.
//
// A corpus without documents is an error, except for a shard (Config.Shard
// set): a shard can be empty (a Slurm array with more tasks than corpus
// units), and its empty index searches together with the others.
//
// The windows are filled by package internal/build (its stages: read,
// prepare, order, embed, add), then publish writes the directory. A build
// that fails or is cancelled leaves nothing behind: not the directory, not
// its staging sibling.
func BuildWithStats(ctx context.Context, src corpus.Reader, cfg Config) (*Index, *BuildStats, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	b, err := newBuilder(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close() // a no-op once Run handed the windows on
	var stage *store.Stage
	if cfg.Out != "" {
		if stage, err = stageOut(ctx, cfg); err != nil {
			return nil, nil, err
		}
		defer stage.Abort() // a no-op once published
	}
	res, err := b.Run(ctx, src)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("msrag: build stopped: %w", ctx.Err())
		}
		return nil, nil, err
	}
	if len(res.IDs) == 0 && cfg.Shard == "" {
		build.CloseWindows(res.Windows)
		return nil, nil, fmt.Errorf("msrag: the corpus has no documents: %w", corpus.ErrEmpty)
	}
	ix, err := newIndex(cfg, res)
	if err != nil {
		return nil, nil, err
	}
	for _, in := range corpus.Inputs(src) {
		ix.man.Inputs = append(ix.man.Inputs, store.Input{Path: in.Path, Size: in.Size, SHA256: in.SHA256})
	}
	if stage != nil {
		ix.man.BuildSeconds = time.Since(start).Seconds()
		if err := publish(ctx, stage, ix); err != nil {
			ix.Close()
			return nil, nil, err
		}
		ix.dir = cfg.Out
	}
	return ix, statsOf(res, ix, start), nil
}

// newBuilder hands cfg (defaults applied) to package build.
func newBuilder(cfg Config) (*build.Builder, error) {
	bc := build.Config{
		Embedder: cfg.Embedder, Windows: cfg.Windows, Factory: cfg.Factory, Metric: cfg.Metric,
		TrainSize: cfg.TrainSize, BatchTokens: cfg.BatchTokens, Workers: cfg.Workers, Units: cfg.Units,
		Late: cfg.Embedding == Late, LateOverlap: cfg.LateOverlap, LateEdges: cfg.LateEdges,
		PrepareHook: cfg.prepareHook,
	}
	if progress := cfg.Progress; progress != nil {
		bc.Progress = func(p build.Progress) { progress(Progress(p)) }
	}
	return build.New(bc)
}

// stageOut takes the output directory's lock (unless the caller holds it) and
// creates its staging directory: a busy directory fails here, before any work.
func stageOut(ctx context.Context, cfg Config) (*store.Stage, error) {
	var lock *store.Lock
	if cfg.Lock != nil {
		lock = cfg.Lock.l
	}
	st, err := store.NewStage(ctx, cfg.Out, lock, cfg.Wait)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	return st, nil
}

// newIndex turns the filled windows of res into an Index, which then owns
// them (and closes them if it fails).
func newIndex(cfg Config, res *build.Result) (*Index, error) {
	man := &Manifest{
		FormatVersion: FormatVersion,
		Model:         modelInfoOf(cfg.Embedder),
		Factory:       cfg.Factory,
		Metric:        cfg.Metric.String(),
		Docs:          int64(len(res.IDs)),
		DocsFile:      "docs.parquet",
		UniqueChunks:  res.Unique,
		Tokens:        res.Tokens,
		Skipped:       res.Skipped,
		Shard:         cfg.Shard,
		Embedding:     cfg.Embedding.String(),
		Created:       time.Now().UTC().Truncate(time.Second),
	}
	if cfg.Embedding == Late {
		man.Late = &store.LateInfo{SegmentTokens: res.Segment, SequenceTokens: cfg.Embedder.Spec().MaxTokens,
			Overlap: res.Overlap, Edges: cfg.LateEdges.String()}
	}
	windows := make([]*window, len(res.Windows))
	for i, w := range res.Windows {
		windows[i] = &window{spec: w.Spec, index: w.Index, chunks: w.Chunks}
		man.Windows = append(man.Windows, WindowInfo{
			Size: w.Spec.Size, Stride: stride(w.Spec), Truncate: w.Spec.Truncate, Tail: tailOf(w.Spec), Vectors: w.Index.Ntotal(),
			IndexFile: w.Spec.Name() + ".faiss", ChunksFile: w.Spec.Name() + ".chunks.parquet",
		})
	}
	ix := &Index{man: man, emb: cfg.Embedder, shards: []*shard{{ids: res.IDs, titles: res.Titles, windows: windows}}}
	if err := ix.indexDocs(); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// stride is what the manifest records as a window's stride: its step, 0 for
// the full window.
func stride(w chunk.Window) int {
	if w.Truncate {
		return 0
	}
	return w.Step()
}

func statsOf(res *build.Result, ix *Index, start time.Time) *BuildStats {
	st := &BuildStats{
		Docs: int64(len(res.IDs)), Skipped: res.Skipped, UniqueChunks: res.Unique,
		Tokens: res.Tokens, EmbedBusy: res.EmbedBusy, Wall: time.Since(start),
	}
	for _, w := range ix.man.Windows {
		st.Vectors = append(st.Vectors, w.Vectors)
	}
	return st
}

// publish writes the index's files into the stage, each hashed as it is
// written, and moves the directory into place.
func publish(ctx context.Context, st *store.Stage, ix *Index) error {
	man, sh := ix.man, ix.shards[0]
	var err error
	man.DocsSHA256, err = st.Create(man.DocsFile, func(w io.Writer) error { return store.WriteDocTable(w, sh.ids, sh.titles) })
	if err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	for i, w := range sh.windows {
		if ctx.Err() != nil {
			return fmt.Errorf("msrag: build stopped: %w", ctx.Err())
		}
		wi := &man.Windows[i]
		if wi.IndexSHA256, err = st.Create(wi.IndexFile, func(out io.Writer) error { _, err := w.index.WriteTo(out); return err }); err != nil {
			return fmt.Errorf("msrag: window %s: %w", w.spec.Name(), err)
		}
		if wi.ChunkSHA256, err = st.Create(wi.ChunksFile, func(out io.Writer) error { return store.WriteChunkTable(out, w.chunks) }); err != nil {
			return fmt.Errorf("msrag: window %s: %w", w.spec.Name(), err)
		}
	}
	if err := st.Publish(man); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	return nil
}
