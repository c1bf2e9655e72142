package build

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/lexical"
	"github.com/msrag/msrag/tokenizer"
)

// Config is one build's settings, defaults already applied by the caller.
type Config struct {
	// Embedder embeds the chunks (independent embedding). Nil makes a build
	// of lexical windows only: Tokenizer cuts the windows, Lexical must be
	// set, no FAISS index is made and nothing is embedded.
	Embedder embed.Embedder
	// Tokenizer cuts the windows of a build without an embedder (with one,
	// the embedder's tokenizer does, and Tokenizer must be nil).
	Tokenizer *tokenizer.Tokenizer
	// Windows are the windows to cut; chunk.New checks them against the
	// embedder's model.
	Windows []chunk.Window
	// Factory and Metric make each window's FAISS index.
	Factory string
	Metric  faiss.Metric
	// TrainSize is how many vectors train a window's index that needs it.
	TrainSize int
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
	// Lexical makes a lexical (BM25) index beside every window, over the
	// same chunk rows, and one over the documents' whole texts, with the
	// terms of Analyzer.
	Lexical  bool
	Analyzer lexical.Analyzer
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
	Elapsed               time.Duration
}

// Result is what a build made. The caller owns the windows and closes them
// (CloseWindows) unless it hands them on.
type Result struct {
	IDs, Titles []string  // the documents, in input order
	Windows     []*Window // in the order of the chunker's windows
	Unique      int64     // unique chunks embedded (or, without an embedder, cut)
	Tokens      int64     // content tokens embedded (or cut)
	Skipped     int64     // records the reader skipped
	EmbedBusy   time.Duration
	// DocLexical is the whole-document lexical index of a Lexical build
	// (a row per document, in input order), nil otherwise.
	DocLexical *lexical.Index
	// Segment and Overlap are a late build's segment content tokens and
	// their overlap (0 for an independent build).
	Segment, Overlap int
}

// Builder holds one build: its configuration, the windows being filled, the
// documents in input order and the counters the stages update.
type Builder struct {
	cfg     Config
	spec    embed.Spec
	chunker *chunk.Chunker
	windows []*Window // the chunker's windows, in order; nil once handed on
	// late is the embedder of a Late build (nil otherwise); segment and
	// overlap are its segments' content tokens and their overlap.
	late             embed.TokenEmbedder
	segment, overlap int

	// ids and titles are written by the order stage only, and so is
	// docLex (the whole-document lexical builder of a Lexical build).
	ids, titles []string
	docLex      *lexical.Builder

	docs, skipped, units atomic.Int64 // read stage
	chunks, tokens       atomic.Int64 // embed stage
	busy                 busyClock    // embed stage
	unique               int64        // add stage
	start                time.Time
	progMu               sync.Mutex
}

// New checks cfg's windows against the embedder's model (and, for a Late
// build, that the model can be late-chunked) and makes an empty
// FAISS index and chunk table per window; without an embedder, a chunk
// table and a lexical index per window. The caller closes the Builder.
func New(cfg Config) (*Builder, error) {
	var spec embed.Spec
	switch {
	case cfg.Embedder != nil && cfg.Tokenizer != nil:
		return nil, errors.New("msrag: a build with an embedder cuts its windows with the embedder's tokenizer: give no other tokenizer")
	case cfg.Embedder != nil:
		spec = cfg.Embedder.Spec()
	case cfg.Tokenizer == nil || !cfg.Lexical || cfg.Late:
		return nil, errors.New("msrag: a build without an embedder needs a tokenizer and lexical windows, and cannot be late")
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
	b := &Builder{cfg: cfg, spec: spec, chunker: ch, start: time.Now()}
	if cfg.Late {
		if b.late, b.segment, b.overlap, err = lateEmbedder(cfg.Embedder, cfg.LateOverlap); err != nil {
			return nil, err
		}
	}
	for _, w := range ch.Config().Windows {
		win := &Window{Spec: w, Chunks: &store.ChunkTable{}}
		if cfg.Embedder != nil {
			if win.Index, err = faiss.New(spec.Dims, cfg.Factory, cfg.Metric); err != nil {
				b.Close()
				return nil, fmt.Errorf("msrag: window %s: %w", w.Name(), err)
			}
		}
		if cfg.Lexical {
			win.lex = &lexical.Builder{}
		}
		b.windows = append(b.windows, win)
	}
	if cfg.Lexical {
		b.docLex = &lexical.Builder{}
	}
	return b, nil
}

// Close frees the windows' FAISS indices unless Run handed them on; it is
// safe to call twice.
func (b *Builder) Close() {
	CloseWindows(b.windows)
	b.windows = nil
}

// Run builds the windows from src (see the package doc) and hands them on
// in the Result; after an error the Builder still owns them. It runs once.
func (b *Builder) Run(ctx context.Context, src corpus.Reader) (*Result, error) {
	if err := b.run(ctx, src); err != nil {
		return nil, err
	}
	for _, w := range b.windows {
		if w.lex != nil {
			w.Lexical, w.lex = w.lex.Build(), nil
		}
	}
	res := &Result{
		IDs: b.ids, Titles: b.titles, Windows: b.windows, Unique: b.unique,
		Tokens: b.tokens.Load(), Skipped: b.skipped.Load(), EmbedBusy: b.busy.busy(),
		Segment: b.segment, Overlap: b.overlap,
	}
	if b.docLex != nil {
		res.DocLexical = b.docLex.Build()
	}
	b.windows = nil
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
	})
}
