package msrag

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
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
// The build runs in the stages of builder.run (read, prepare, order, embed,
// add), then publish writes the directory. A build that fails or is
// cancelled leaves nothing behind: not the directory, not its staging
// sibling.
func BuildWithStats(ctx context.Context, src corpus.Reader, cfg Config) (*Index, *BuildStats, error) {
	start := time.Now()
	b, err := newBuilder(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer b.closeWindows() // a no-op once the Index owns them
	var stage *store.Stage
	if b.cfg.Out != "" {
		if stage, err = b.stage(ctx); err != nil {
			return nil, nil, err
		}
		defer stage.Abort() // a no-op once published
	}
	if err := b.run(ctx, src); err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("msrag: build stopped: %w", ctx.Err())
		}
		return nil, nil, err
	}
	if len(b.ids) == 0 && b.cfg.Shard == "" {
		return nil, nil, fmt.Errorf("msrag: the corpus has no documents: %w", corpus.ErrEmpty)
	}
	ix, err := b.index()
	if err != nil {
		return nil, nil, err
	}
	for _, in := range corpus.Inputs(src) {
		ix.man.Inputs = append(ix.man.Inputs, store.Input{Path: in.Path, Size: in.Size, SHA256: in.SHA256})
	}
	if stage != nil {
		ix.man.BuildSeconds = time.Since(start).Seconds()
		if err := b.publish(ctx, stage, ix); err != nil {
			ix.Close()
			return nil, nil, err
		}
		ix.dir = b.cfg.Out
	}
	return ix, b.stats(start, ix), nil
}

// builder holds one build: its configuration, the windows being filled, the
// documents in input order and the counters the stages update.
type builder struct {
	cfg     Config
	spec    embed.Spec
	chunker *chunk.Chunker
	windows []*window // the chunker's windows, in order; nil once the Index owns them
	// late is the embedder of a Late build (nil otherwise); segment and
	// overlap are its segments' content tokens and their overlap.
	late             embed.TokenEmbedder
	segment, overlap int

	// ids and titles are written by the order stage only.
	ids, titles []string

	docs, skipped, units atomic.Int64 // read stage
	chunks, tokens       atomic.Int64 // embed stage
	busy                 busyClock    // embed stage
	unique               int64        // add stage
	start                time.Time
	progMu               sync.Mutex
}

func newBuilder(cfg Config) (*builder, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	spec := cfg.Embedder.Spec()
	ch, err := chunk.New(chunk.Config{
		Windows:       cfg.Windows,
		MaxTokens:     spec.MaxTokens,
		PrefixTokens:  spec.PrefixTokens[embed.Passage],
		SpecialTokens: spec.SpecialTokens,
	})
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	b := &builder{cfg: cfg, spec: spec, chunker: ch, start: time.Now()}
	if cfg.Embedding == Late {
		if b.late, b.segment, b.overlap, err = lateEmbedder(cfg.Embedder, cfg.LateOverlap); err != nil {
			return nil, err
		}
	}
	for _, w := range ch.Config().Windows {
		fi, err := faiss.New(spec.Dims, cfg.Factory, cfg.Metric)
		if err != nil {
			b.closeWindows()
			return nil, fmt.Errorf("msrag: window %s: %w", w.Name(), err)
		}
		b.windows = append(b.windows, &window{spec: w, index: fi, chunks: &store.ChunkTable{}})
	}
	return b, nil
}

func (b *builder) closeWindows() {
	closeWindows(b.windows)
	b.windows = nil
}

// stage takes the output directory's lock (unless the caller holds it) and
// creates its staging directory: a busy directory fails here, before any work.
func (b *builder) stage(ctx context.Context) (*store.Stage, error) {
	var lock *store.Lock
	if b.cfg.Lock != nil {
		lock = b.cfg.Lock.l
	}
	st, err := store.NewStage(ctx, b.cfg.Out, lock, b.cfg.Wait)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	return st, nil
}

// report hands a snapshot of the counters to Config.Progress.
func (b *builder) report() {
	if b.cfg.Progress == nil {
		return
	}
	b.progMu.Lock()
	defer b.progMu.Unlock()
	b.cfg.Progress(Progress{
		Docs: b.docs.Load(), Skipped: b.skipped.Load(), Chunks: b.chunks.Load(), Tokens: b.tokens.Load(),
		UnitsDone: b.units.Load(), UnitsTotal: int64(b.cfg.Units), Elapsed: time.Since(b.start),
	})
}

// index turns the finished windows into an Index, which then owns them.
func (b *builder) index() (*Index, error) {
	man := &Manifest{
		FormatVersion: FormatVersion,
		Model:         modelInfoOf(b.cfg.Embedder),
		Factory:       b.cfg.Factory,
		Metric:        b.cfg.Metric.String(),
		Docs:          int64(len(b.ids)),
		DocsFile:      "docs.parquet",
		UniqueChunks:  b.unique,
		Tokens:        b.tokens.Load(),
		Skipped:       b.skipped.Load(),
		Shard:         b.cfg.Shard,
		Embedding:     b.cfg.Embedding.String(),
		Created:       time.Now().UTC().Truncate(time.Second),
		Batching:      EmbedderBatching(b.cfg.Embedder),
	}
	built := CurrentBuild()
	man.Build = &built
	if b.late != nil {
		man.Late = &store.LateInfo{SegmentTokens: b.segment, SequenceTokens: b.spec.MaxTokens, Overlap: b.overlap, Edges: b.cfg.LateEdges.String()}
	}
	for _, w := range b.windows {
		man.Windows = append(man.Windows, WindowInfo{
			Size: w.spec.Size, Stride: stride(w.spec), Truncate: w.spec.Truncate, Tail: tailOf(w.spec), Vectors: w.index.Ntotal(),
			IndexFile: w.spec.Name() + ".faiss", ChunksFile: w.spec.Name() + ".chunks.parquet",
		})
	}
	ix := &Index{man: man, emb: b.cfg.Embedder, shards: []*shard{{ids: b.ids, titles: b.titles, windows: b.windows}}}
	b.windows = nil
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

func (b *builder) stats(start time.Time, ix *Index) *BuildStats {
	st := &BuildStats{
		Docs: int64(len(b.ids)), Skipped: b.skipped.Load(), UniqueChunks: b.unique,
		Tokens: b.tokens.Load(), EmbedBusy: b.busy.busy(), Wall: time.Since(start),
	}
	for _, w := range ix.man.Windows {
		st.Vectors = append(st.Vectors, w.Vectors)
	}
	return st
}

// publish writes the index's files into the stage, each hashed as it is
// written, and moves the directory into place.
func (b *builder) publish(ctx context.Context, st *store.Stage, ix *Index) error {
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
