package build

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/clock"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/tokenizer"
)

// Config is one build's settings, defaults already applied by the caller.
type Config struct {
	// Embedder embeds the chunks (independent embedding). Nil makes a build
	// without vectors: Tokenizer cuts the windows, nothing is embedded, and
	// no kind may need chunk vectors.
	Embedder embed.Embedder
	// Tokenizer cuts the windows of a build without an embedder (with one,
	// the embedder's tokenizer does, and Tokenizer must be nil).
	Tokenizer *tokenizer.Tokenizer
	// Windows are the windows to cut; chunk.New checks them against the
	// embedder's model.
	Windows []chunk.Window
	// Kinds are the kinds of channel the build fills, each by its
	// parameters (channel.Params, whose Kind builds): each gets every
	// chunk of every window (and its vector) and every document.
	Kinds []channel.Params
	// BatchTokens is the number of tokens handed to the embedder at once.
	BatchTokens int
	// Workers is the number of goroutines that tokenize and chunk.
	Workers int
	// Progress, when set, receives the counters after every batch read and
	// every batch embedded, one call at a time.
	Progress func(Progress)
	// Units is the number of corpus units the reader will read (0: unknown).
	Units int
	// Late makes a late-chunking build: each document's segments (as many
	// content tokens as the model takes, consecutive ones sharing
	// LateOverlap, 0: late.DefaultOverlap) are encoded once and every chunk
	// pools its rows (LateEdges says which). The embedder must be an
	// embed.TokenEmbedder with mean pooling.
	Late        bool
	LateOverlap int
	LateEdges   late.Edges
	// PrepareHook, when set, is called for every document before it is
	// tokenized; an error fails the build as a failing document would. Tests
	// use it to fail or stall one document.
	PrepareHook func(id string) error
}

// Progress is a snapshot of a build's counters.
type Progress struct {
	Docs    int64 // documents read
	Skipped int64 // records skipped (empty text, repeated id)
	Chunks  int64 // unique chunks embedded
	Tokens  int64 // content tokens embedded
	// UnitsDone and UnitsTotal are the corpus units read and expected
	// (Config.Units; 0: unknown).
	UnitsDone, UnitsTotal int64
	// ChunksTotal is the number of chunks the build embeds (or, without an
	// embedder, cuts): 0 until every document has been read and cut, then
	// the total Chunks reaches.
	ChunksTotal int64
	// BytesDone and BytesTotal are the bytes of the corpus file read, as
	// stored (compressed for a gzip'd file), and its size; 0 where the
	// format does not say (corpus.Stats.InputBytes).
	BytesDone, BytesTotal int64
	Elapsed               time.Duration
}

// Result is what a build made. The caller owns the kinds' builders and
// finishes (channel.Builder.Finish) or closes them (CloseBuilders).
type Result struct {
	IDs, Titles []string       // the documents, in input order
	Windows     []chunk.Window // the chunker's windows (the full one's size resolved)
	// Tables are each window's chunk table: row r is row r of every
	// kind's channel of the window.
	Tables []*store.ChunkTable
	// Builders are Config.Kinds's builders, filled, not finished.
	Builders  []channel.Builder
	Unique    int64 // unique chunks embedded (or, without an embedder, cut)
	Tokens    int64 // content tokens embedded (or cut)
	Skipped   int64 // records the reader skipped
	EmbedBusy time.Duration
	// Segment and Overlap are a late build's segment content tokens and
	// their overlap (0 for an independent build).
	Segment, Overlap int
}

// Builder holds one build: its configuration, the kinds' builders, the
// windows' chunk tables, the documents in input order and the counters the
// stages update.
type Builder struct {
	cfg      Config
	spec     embed.Spec
	chunker  *chunk.Chunker
	windows  []chunk.Window
	tables   []*store.ChunkTable
	builders []channel.Builder // Config.Kinds's, in order; nil once handed on
	// late is the embedder of a Late build (nil otherwise); segment and
	// overlap are its segments' content tokens and their overlap.
	late             embed.TokenEmbedder
	segment, overlap int

	// ids and titles are written by the order stage only.
	ids, titles []string

	docs, skipped, units atomic.Int64 // read stage
	bytes, bytesTotal    atomic.Int64 // read stage
	readBatches          atomic.Int64 // read stage: batches read, once readAll
	readAll              atomic.Bool  // read stage: the corpus is read
	cut, prepared        atomic.Int64 // prepare stage: chunks cut, batches cut
	chunks, tokens       atomic.Int64 // embed stage
	busy                 clock.Busy   // embed stage
	unique               int64        // add stage
	start                time.Time
	progMu               sync.Mutex
}

// New checks cfg's windows against the embedder's model (and, for a Late
// build, that the model can be late-chunked) and starts every kind's
// builder. The caller closes the Builder.
func New(cfg Config) (*Builder, error) {
	var spec embed.Spec
	switch {
	case cfg.Embedder != nil && cfg.Tokenizer != nil:
		return nil, errors.New("msrag: a build with an embedder cuts its windows with the embedder's tokenizer: give no other tokenizer")
	case cfg.Embedder != nil:
		spec = cfg.Embedder.Spec()
	case cfg.Tokenizer == nil || cfg.Late:
		return nil, errors.New("msrag: a build without an embedder needs a tokenizer, and cannot be late")
	}
	if len(cfg.Kinds) == 0 {
		return nil, errors.New("msrag: a build needs a kind of channel to fill")
	}
	ch, err := chunk.New(chunk.Config{
		Windows:       cfg.Windows,
		MaxTokens:     spec.MaxTokens,
		PrefixTokens:  spec.PrefixTokens[embed.Passage],
		SpecialTokens: spec.SpecialTokens,
	})
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	b := &Builder{cfg: cfg, spec: spec, chunker: ch, windows: ch.Config().Windows, start: time.Now()}
	if cfg.Late {
		if b.late, b.segment, b.overlap, err = lateEmbedder(cfg.Embedder, cfg.LateOverlap); err != nil {
			return nil, err
		}
	}
	for range b.windows {
		b.tables = append(b.tables, &store.ChunkTable{})
	}
	for _, p := range cfg.Kinds {
		k := p.Kind()
		if k.Needs().Has(channel.ChunkVectors) && cfg.Embedder == nil {
			b.Close()
			return nil, fmt.Errorf("msrag: %s channels need the chunks' vectors, and the build has no model: %w", k.Name(), k.Traits().Absent)
		}
		kb, err := k.NewBuilder(p, channel.BuildConfig{Windows: b.windows, Dims: spec.Dims})
		if err != nil {
			b.Close()
			return nil, err
		}
		b.builders = append(b.builders, kb)
	}
	return b, nil
}

// Close closes the kinds' builders unless Run handed them on; it is safe
// to call twice.
func (b *Builder) Close() {
	CloseBuilders(b.builders)
	b.builders = nil
}

// CloseBuilders closes builders.
func CloseBuilders(bs []channel.Builder) {
	for _, kb := range bs {
		if kb != nil {
			kb.Close()
		}
	}
}

// Run builds the windows from src (see the package doc) and hands them on
// in the Result; after an error the Builder still owns them. It runs once.
func (b *Builder) Run(ctx context.Context, src corpus.Reader) (*Result, error) {
	if err := b.run(ctx, src); err != nil {
		return nil, err
	}
	res := &Result{
		IDs: b.ids, Titles: b.titles, Windows: b.windows, Tables: b.tables, Builders: b.builders, Unique: b.unique,
		Tokens: b.tokens.Load(), Skipped: b.skipped.Load(), EmbedBusy: b.busy.Elapsed(),
		Segment: b.segment, Overlap: b.overlap,
	}
	b.builders = nil
	return res, nil
}

// report hands a snapshot of the counters to Config.Progress.
func (b *Builder) report() {
	if b.cfg.Progress == nil {
		return
	}
	b.progMu.Lock()
	defer b.progMu.Unlock()
	b.cfg.Progress(Progress{
		Docs: b.docs.Load(), Skipped: b.skipped.Load(), Chunks: b.chunks.Load(), Tokens: b.tokens.Load(),
		UnitsDone: b.units.Load(), UnitsTotal: int64(b.cfg.Units), Elapsed: time.Since(b.start),
		ChunksTotal: b.chunksTotal(), BytesDone: b.bytes.Load(), BytesTotal: b.bytesTotal.Load(),
	})
}

// chunksTotal is the number of chunks the build embeds once the corpus is
// read and every batch of it cut, else 0. A batch adds its chunks before it
// counts as cut, so the count is whole once every batch is.
func (b *Builder) chunksTotal() int64 {
	if !b.readAll.Load() || b.prepared.Load() != b.readBatches.Load() {
		return 0
	}
	return b.cut.Load()
}
