package msrag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/internal/build"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/late"
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
		build.CloseBuilders(res.Builders)
		return nil, nil, fmt.Errorf("msrag: the corpus has no documents: %w", corpus.ErrEmpty)
	}
	ix, err := newIndex(cfg, res)
	if err != nil {
		return nil, nil, err
	}
	ix.man.Inputs, ix.man.Rebuildable = inputsOf(src, cfg.Inputs), cfg.Rebuildable
	if stage != nil {
		ix.man.BuildSeconds = time.Since(start).Seconds()
		if err := publish(ctx, stage, ix); err != nil {
			ix.Close()
			if ctx.Err() != nil {
				return nil, nil, fmt.Errorf("msrag: build stopped: %w", ctx.Err())
			}
			return nil, nil, err
		}
		ix.dir = cfg.Out
	}
	return ix, statsOf(res, ix, start), nil
}

// inputsOf returns what the manifest records of the files the build read:
// the reader's record, else given, each with its modification time.
func inputsOf(src corpus.Reader, given []Input) []Input {
	var out []Input
	for _, in := range corpus.Inputs(src) {
		out = append(out, Input{Path: in.Path, Size: in.Size, SHA256: in.SHA256, Shared: in.Shared})
	}
	if out == nil {
		out = slices.Clone(given)
	}
	for i := range out {
		if out[i].MTime == "" {
			if st, err := os.Stat(out[i].Path); err == nil && st.Size() == out[i].Size {
				out[i].MTime = st.ModTime().UTC().Format(time.RFC3339Nano)
			}
		}
	}
	return out
}

// DefaultWindows are the windows used when Config.Windows is empty: 100, 200
// and 500 tokens, without overlap.
var DefaultWindows = chunk.Sizes(100, 200, 500)

// Config says how to build an index. The zero value of every field but
// Embedder (or Tokenizer) has a documented default.
type Config struct {
	// Embedder embeds the chunks; required unless Tokenizer is set.
	Embedder Embedder
	// Tokenizer, with no Embedder, makes an index without a model: the
	// windows are cut by its tokens exactly as a build with a model of that
	// tokenizer cuts them (no model maximum: a window may be of any size,
	// and there is no full window), nothing is embedded and its channels
	// are of kinds that read texts alone. Its manifest's model is NoModel
	// (Index.HasModel is false), and it searches by the query texts alone.
	// Embedding and BatchTokens do not apply.
	Tokenizer *WindowTokenizer
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
	// Inputs are recorded as the files the build read when the corpus
	// reader records none itself (Parquet and Arrow readers read at random:
	// a caller that hashed the files records them here); a reader's own
	// record (JSONL, .txt/.md files) is kept otherwise.
	Inputs []Input
	// Rebuildable marks the index as one an evaluation built for itself,
	// which a later evaluation may build again (Manifest.Rebuildable).
	Rebuildable bool
	// Channels are the kinds of channel the build makes, each once, by
	// their parameters (channel.Params: a value of the kind's own type,
	// which its package makes: dense.Params{}, bm25.DefaultConfig()).
	// Empty: the registered kinds that are built by default
	// (channel.Defaults: with a model, its vectors' kind; without, the
	// texts' kind). A build with an Embedder makes at least one kind that
	// reads the chunks' vectors, one without none. The manifest records
	// every kind's parameters.
	Channels []channel.Params

	// prepareHook, when set by a test, is called for every document before
	// it is tokenized (build.Config.PrepareHook).
	prepareHook func(id string) error
	// publish, set by a test, moves the staging directory into place
	// (store.Stage.Replace): its Step sees each step of the publish.
	publish safefile.Replacer
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

// BuildStats reports what a build did.
type BuildStats struct {
	Docs, Skipped, UniqueChunks, Tokens int64
	Vectors                             []int64 // per window, in index order
	Wall, EmbedBusy                     time.Duration
}

func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Embedder == nil && c.Tokenizer == nil:
		return c, errors.New("msrag: Config.Embedder is required (or Config.Tokenizer, for an index without a model)")
	case c.Embedder != nil && c.Tokenizer != nil:
		return c, errors.New("msrag: Config.Tokenizer is for an index without an embedder; the embedder's tokenizer cuts the windows")
	case c.Tokenizer != nil && (c.Tokenizer.Tokenizer == nil || c.Tokenizer.SHA256 == ""):
		return c, errors.New("msrag: Config.Tokenizer has no tokenizer or sha256 (LoadWindowTokenizer makes one)")
	case c.Tokenizer != nil && (c.Embedding != Independent || slices.ContainsFunc(c.Windows, func(w chunk.Window) bool { return w.Truncate })):
		return c, errors.New("msrag: an index without an embedder has no late embedding and no full window (there is no model maximum)")
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
	if err := c.checkChannels(); err != nil {
		return c, err
	}
	if c.BatchTokens <= 0 {
		c.BatchTokens = 1 << 15
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c, nil
}

// checkChannels applies the default kinds (none given) and refuses a kind
// given twice, parameters the kind refuses, and kinds that do not suit the
// build: with an Embedder, none that reads the chunks' vectors; without,
// one that does.
func (c *Config) checkChannels() error {
	model := c.Embedder != nil
	if len(c.Channels) == 0 {
		if c.Channels = channel.Defaults(model); len(c.Channels) == 0 {
			return errors.New("msrag: Config.Channels is empty and no kind of channel is registered to build by default (import package channels, or the kinds' own packages)")
		}
	}
	c.Channels = slices.Clone(c.Channels)
	vectors := false
	for i, p := range c.Channels {
		if p == nil || p.Kind() == nil {
			return fmt.Errorf("msrag: Config.Channels[%d] has no kind", i)
		}
		k := p.Kind()
		for _, o := range c.Channels[:i] {
			if o.Kind() == k {
				return fmt.Errorf("msrag: Config.Channels: kind %s given twice", k.Name())
			}
		}
		if _, err := p.Settings(); err != nil {
			return fmt.Errorf("msrag: Config.Channels[%d] (%s): %w", i, k.Name(), err)
		}
		reads := k.Needs().Has(channel.ChunkVectors)
		if reads && !model {
			return fmt.Errorf("msrag: Config.Channels[%d]: %s channels search the model's vectors, and the build has no Embedder", i, k.Name())
		}
		vectors = vectors || reads
	}
	if model && !vectors {
		return fmt.Errorf("msrag: Config.Channels: no kind reads the vectors of the Embedder (%s); a build of the texts alone takes Config.Tokenizer", kindsString(c.Channels))
	}
	return nil
}

// kindsString names the kinds of cs.
func kindsString(cs []channel.Params) string {
	var names []string
	for _, p := range cs {
		names = append(names, p.Kind().Name())
	}
	return strings.Join(names, ", ")
}

// kinds are the parameters of the kinds of channel the build makes, in
// layout order.
func (c Config) kinds() []channel.Params {
	out := slices.Clone(c.Channels)
	slices.SortStableFunc(out, func(a, b channel.Params) int { return a.Kind().Traits().Order - b.Kind().Traits().Order })
	return out
}

// newBuilder hands cfg (defaults applied) to package build.
func newBuilder(cfg Config) (*build.Builder, error) {
	bc := build.Config{
		Embedder: cfg.Embedder, Windows: cfg.Windows, Kinds: cfg.kinds(),
		BatchTokens: cfg.BatchTokens, Workers: cfg.Workers, Units: cfg.Units,
		Late: cfg.Embedding == Late, LateOverlap: cfg.LateOverlap, LateEdges: cfg.LateEdges,
		PrepareHook: cfg.prepareHook,
	}
	if cfg.Tokenizer != nil {
		bc.Tokenizer = cfg.Tokenizer.Tokenizer
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
	st.Replace = cfg.publish
	return st, nil
}

// newIndex turns what the build made into an Index, which then owns it:
// each kind's builder finished into its part of the one shard.
func newIndex(cfg Config, res *build.Result) (*Index, error) {
	man := &Manifest{
		FormatVersion: FormatVersion,
		Docs:          int64(len(res.IDs)),
		DocsFile:      "docs.parquet",
		UniqueChunks:  res.Unique,
		Tokens:        res.Tokens,
		Skipped:       res.Skipped,
		Shard:         cfg.Shard,
		Embedding:     cfg.Embedding.String(),
		Created:       time.Now().UTC().Truncate(time.Second),
	}
	if err := setModel(man, cfg); err != nil {
		build.CloseBuilders(res.Builders)
		return nil, err
	}
	built := CurrentBuild()
	man.Build = &built
	if cfg.Embedding == Late {
		man.Late = &store.LateInfo{SegmentTokens: res.Segment, SequenceTokens: cfg.Embedder.Spec().MaxTokens,
			Overlap: res.Overlap, Edges: cfg.LateEdges.String()}
	}
	for i, w := range res.Windows {
		man.Windows = append(man.Windows, WindowInfo{
			Size: w.Size, Stride: indexfile.StrideOf(w), Truncate: w.Truncate, Tail: indexfile.TailOf(w), Vectors: int64(res.Tables[i].Len()),
			ChunksFile: w.Name() + ".chunks.parquet",
		})
	}
	sh := &shard{man: man, ids: res.IDs, titles: res.Titles, specs: res.Windows, tables: res.Tables}
	ix := &Index{man: man, emb: cfg.Embedder, shards: []*shard{sh}}
	var kinds []channel.Kind
	for _, p := range cfg.kinds() {
		kinds = append(kinds, p.Kind())
	}
	ix.setKinds(kinds)
	if err := ix.indexDocs(); err != nil {
		build.CloseBuilders(res.Builders)
		return nil, err
	}
	if err := finishKinds(sh, man, res); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

// finishKinds finishes every kind's builder into its part of sh and
// records the kinds in man (their files not yet written).
func finishKinds(sh *shard, man *Manifest, res *build.Result) error {
	src := sh.source(man, res.Windows)
	for i, kb := range res.Builders {
		p, err := kb.Finish(src)
		if err != nil {
			build.CloseBuilders(res.Builders[i:])
			return err
		}
		sh.parts = append(sh.parts, p)
		if err := p.Write(nil, man); err != nil {
			build.CloseBuilders(res.Builders[i+1:])
			return err
		}
	}
	if len(man.Channels) > 0 {
		man.FormatVersion = indexfile.ChannelsFormatVersion
	}
	return nil
}

// setModel records the model of cfg in man: the embedder's, or for an index
// without a model NoModel and its tokenizer (format NoModelFormatVersion).
func setModel(man *Manifest, cfg Config) error {
	if cfg.Embedder != nil {
		man.Model, man.Batching = modelInfoOf(cfg.Embedder), EmbedderBatching(cfg.Embedder)
		return nil
	}
	var err error
	if man.Model, err = noModelInfo(cfg.Tokenizer); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	man.FormatVersion, man.Embedding = indexfile.NoModelFormatVersion, NoModel
	return nil
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
// written (the documents, every window's chunk table, every kind's files),
// and moves the directory into place.
func publish(ctx context.Context, st *store.Stage, ix *Index) error {
	man, sh := ix.man, ix.shards[0]
	var err error
	man.DocsSHA256, err = st.Create(man.DocsFile, func(w io.Writer) error { return store.WriteDocTable(w, sh.ids, sh.titles) })
	if err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	for i, t := range sh.tables {
		wi := &man.Windows[i]
		if wi.ChunkSHA256, err = st.Create(wi.ChunksFile, func(out io.Writer) error { return store.WriteChunkTable(out, t) }); err != nil {
			return fmt.Errorf("msrag: window %s: %w", wi.Window().Name(), err)
		}
	}
	for _, p := range sh.parts {
		if ctx.Err() != nil {
			return fmt.Errorf("msrag: build stopped: %w", ctx.Err())
		}
		if err := p.Write(st, man); err != nil {
			return err
		}
	}
	if err := st.Publish(man); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	return nil
}

// Identity returns the identity an index built with c has, as far as it is
// known before the build (IdentityOf reads a built index's): the model,
// how its windows are embedded, its batching, its channels and every
// kind's parameters (as the kind describes them); not the inputs (the
// corpus is read by the build). Defaults are applied first, so a
// configuration that cannot build fails here too.
func (c Config) Identity() (Identity, error) {
	c, err := c.withDefaults()
	if err != nil {
		return Identity{}, err
	}
	var kinds []ChannelKind
	id := Identity{Params: map[string]channel.Settings{}, Shard: c.Shard}
	for _, p := range c.kinds() {
		k := p.Kind()
		kinds = append(kinds, k)
		if id.Params[k.Name()], err = p.Settings(); err != nil {
			return Identity{}, fmt.Errorf("msrag: %s: %w", k.Name(), err)
		}
	}
	id.Layout = LayoutOf(c.Windows, kinds...)
	if c.Embedder == nil {
		if id.Model, err = noModelInfo(c.Tokenizer); err != nil {
			return Identity{}, fmt.Errorf("msrag: %w", err)
		}
		return id, nil
	}
	id.Model = modelInfoOf(c.Embedder)
	id.Embedding, id.Batching = c.embeddingString(), EmbedderBatching(c.Embedder)
	if id.Batching == "" {
		id.Batching = embed.BatchingPadded // what an index records of an embedder without the choice
	}
	return id, nil
}

// embeddingString describes how c embeds windows, as embeddingOf describes
// a built index's.
func (c Config) embeddingString() string {
	if c.Embedding != Late {
		return c.Embedding.String()
	}
	segment := c.Embedder.Spec().MaxContent(embed.Passage)
	overlap := c.LateOverlap
	if overlap == 0 {
		overlap = late.DefaultOverlap(segment)
	}
	return fmt.Sprintf("%s (segments of %d tokens, overlap %d, edges %s)", c.Embedding, segment, overlap, c.LateEdges)
}
