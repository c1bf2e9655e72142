package msrag

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/late"
)

// DefaultWindows are the windows used when Config.Windows is empty: 100, 200
// and 500 tokens, without overlap.
var DefaultWindows = chunk.Sizes(100, 200, 500)

// Config says how to build an index. The zero value of every field but
// Embedder has a documented default.
type Config struct {
	// Embedder embeds the chunks; required.
	Embedder Embedder
	// Out is the index directory. It is written to a temporary sibling and
	// renamed into place when complete, under the directory's lock (see
	// LockIndex). Empty: the index is kept in memory only.
	Out string
	// Windows are the windows: sliding windows of distinct sizes (each with
	// its stride) and at most one full window (chunk.Full: each document's
	// first tokens, as many as the model takes); default DefaultWindows.
	Windows []chunk.Window
	// Embedding is how windows become vectors; default Independent. With
	// Late, LateOverlap is the number of content tokens consecutive segments
	// of a long document share; 0 means a quarter of a segment
	// (late.DefaultOverlap). A segment is as long as the model takes.
	Embedding   Embedding
	LateOverlap int
	// LateEdges says which rows besides a window's own tokens a Late build
	// pools; default late.EdgesSegment (the paper's choice).
	LateEdges late.Edges
	// Factory is the FAISS index factory string for every window; default "Flat".
	Factory string
	// Metric is the FAISS metric; default inner product (vectors are normalised).
	Metric faiss.Metric
	// TrainSize is how many vectors of each window train an index that needs
	// training (IVF, PQ); default 65,536. They are buffered until then.
	TrainSize int
	// BatchTokens is the number of content tokens handed to the embedder at
	// once (it sorts them by length and cuts its own batches); default 32,768.
	BatchTokens int
	// Workers is the number of goroutines that tokenize and chunk; default
	// GOMAXPROCS.
	Workers int
	// Progress, when set, receives the build's counters after every batch of
	// documents read and every batch embedded, one call at a time. It runs on
	// the pipeline's goroutines and must return quickly.
	Progress func(Progress)
	// Units is the number of corpus units (corpus.CountUnits: row groups,
	// record batches, files, line blocks) the reader will read, passed on to
	// Progress for an ETA; 0: unknown.
	Units int
	// Shard is recorded in the manifest ("i/n") when the corpus reader reads one shard.
	Shard string
	// Lock is Out's lock when the caller holds it (LockIndex); nil: Build
	// takes it, waiting for another build of Out when Wait is set and
	// failing at once otherwise.
	Lock *IndexLock
	Wait bool

	// prepareHook, when set by a test, is called for every document before
	// it is tokenized (build.Config.PrepareHook).
	prepareHook func(id string) error
}

// Progress is a snapshot of a build's counters. It has the fields of
// package internal/build's, which counts them.
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

// BuildStats reports what a build did.
type BuildStats struct {
	Docs, Skipped, UniqueChunks, Tokens int64
	Vectors                             []int64 // per window, in index order
	Wall, EmbedBusy                     time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.Embedder == nil {
		return c, errors.New("msrag: Config.Embedder is required")
	}
	if len(c.Windows) == 0 {
		c.Windows = DefaultWindows
	}
	c.Windows = slices.Clone(c.Windows)
	if len(c.Windows) > 64 {
		return c, fmt.Errorf("msrag: %d windows; at most 64", len(c.Windows))
	}
	switch {
	case c.Embedding != Independent && c.Embedding != Late:
		return c, fmt.Errorf("msrag: %v: want Independent or Late", c.Embedding)
	case c.LateOverlap < 0:
		return c, fmt.Errorf("msrag: late overlap %d: want 0 (a quarter of a segment) or more tokens", c.LateOverlap)
	case c.LateEdges != late.EdgesSegment && c.LateEdges != late.EdgesNone:
		return c, fmt.Errorf("msrag: %v: want late.EdgesSegment or late.EdgesNone", c.LateEdges)
	case (c.LateOverlap > 0 || c.LateEdges != late.EdgesSegment) && c.Embedding != Late:
		return c, fmt.Errorf("msrag: a late overlap or edges are for late embedding only, and the embedding is %v", c.Embedding)
	}
	if c.Factory == "" {
		c.Factory = "Flat"
	}
	if c.TrainSize <= 0 {
		c.TrainSize = 1 << 16
	}
	if c.BatchTokens <= 0 {
		c.BatchTokens = 1 << 15
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c, nil
}
