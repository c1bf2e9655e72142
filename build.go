package msrag

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/tokenizer"
)

// DefaultWindows are the window sizes, in content tokens, used when Config.Windows is empty.
var DefaultWindows = []int{100, 200, 500}

// Config says how to build an index. The zero value of every field but Embedder
// has a documented default.
type Config struct {
	// Embedder embeds the chunks; required.
	Embedder Embedder
	// Out is the index directory. It is written to a temporary sibling and
	// renamed into place when complete. Empty: the index is kept in memory only.
	Out string
	// Windows are the window sizes in content tokens; default DefaultWindows.
	Windows []int
	// Stride is the step between window starts; 0 means each window's own size.
	Stride int
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
	// Progress receives progress lines (a bar on a terminal); nil: none.
	Progress io.Writer
	// Units is the number of corpus units (corpus.CountUnits: row groups,
	// record batches, files, line blocks) the reader will read, for the
	// progress bar and ETA; 0: unknown, no ETA.
	Units int
	// Shard is recorded in the manifest ("i/n") when the corpus reader reads one shard.
	Shard string
	// Full also indexes every document whole, truncated to the most content
	// tokens the model takes (its maximum less prefix and special tokens), as
	// MTEB embeds documents: the "full" configuration. A truncated document
	// equal to one of its windows is embedded once.
	Full bool
}

func (c Config) withDefaults() (Config, error) {
	if c.Embedder == nil {
		return c, errors.New("msrag: Config.Embedder is required")
	}
	if len(c.Windows) == 0 {
		c.Windows = append([]int(nil), DefaultWindows...)
	}
	if len(c.Windows) > 64 {
		return c, fmt.Errorf("msrag: %d windows; at most 64", len(c.Windows))
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

// BuildStats reports what a build did.
type BuildStats struct {
	Docs, Skipped, UniqueChunks, Tokens int64
	Vectors                             []int64 // per window
	Wall, EmbedBusy                     time.Duration
}

// item is one unique chunk on its way to the embedder.
type item struct {
	doc                int32
	tokStart, tokEnd   int32
	byteStart, byteEnd int64
	member             uint64 // bit i: the chunk is a window of Windows[i]
	ids                []int32
}

type docBatch struct {
	seq    int
	base   int32 // doc index of docs[0]
	docs   []corpus.Doc
	items  []item
	tokens int64
}

type embedBatch struct {
	items  []item
	tokens int64
	vecs   []float32
}

// Build reads every document from src, cuts it into windows of every size,
// embeds each unique chunk once and adds it to the index of every window size it
// belongs to. With cfg.Out set the index is written there (atomically) and the
// returned Index is backed by it. The caller still owns and closes src.
func Build(ctx context.Context, src corpus.Reader, cfg Config) (*Index, error) {
	ix, _, err := BuildWithStats(ctx, src, cfg)
	return ix, err
}

// BuildWithStats is Build, also returning what the build did.
func BuildWithStats(ctx context.Context, src corpus.Reader, cfg Config) (*Index, *BuildStats, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	emb := cfg.Embedder
	tok := emb.Tokenizer()
	ch, err := chunk.New(chunk.Config{
		Windows:       cfg.Windows,
		Stride:        cfg.Stride,
		MaxTokens:     emb.MaxTokens(),
		PrefixTokens:  emb.PrefixTokens(onnx.Passage),
		SpecialTokens: tok.NumSpecialTokens(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("msrag: %w", err)
	}
	sizes := slices.Clone(cfg.Windows)
	maxContent := emb.MaxTokens() - emb.PrefixTokens(onnx.Passage) - tok.NumSpecialTokens()
	if cfg.Full {
		sizes = append(sizes, maxContent)
	}
	windows := make([]*window, len(sizes))
	for i, w := range sizes {
		fi, err := faiss.New(emb.Dims(), cfg.Factory, cfg.Metric)
		if err != nil {
			closeWindows(windows)
			return nil, nil, fmt.Errorf("msrag: window %d: %w", w, err)
		}
		stride := cfg.Stride
		if stride == 0 {
			stride = w
		}
		windows[i] = &window{size: w, stride: stride, index: fi, chunks: &chunkTable{}, full: i == len(cfg.Windows)}
	}
	fullBit := uint64(1) << len(cfg.Windows)

	var prog Progress
	prog.Total.Store(int64(cfg.Units))
	rep := startReporter(&prog, cfg.Progress, "index")
	var (
		ids, titles []string
		embedBusy   atomic.Int64
	)
	g, gctx := errgroup.WithContext(ctx)
	read := make(chan *docBatch, 2)
	prepped := make(chan *docBatch, 2)
	toEmbed := make(chan *embedBatch, 1)
	toAdd := make(chan *embedBatch, 1)

	// Read: batches of documents, numbered in input order.
	g.Go(func() error {
		defer close(read)
		var seq int
		var next int32
		for {
			docs, err := src.Next(gctx)
			if err == io.EOF {
				st := src.Stats()
				prog.Skipped.Store(st.Empty + st.Duplicates)
				return nil
			}
			if err != nil {
				return err
			}
			b := &docBatch{seq: seq, base: next, docs: docs}
			seq++
			next += int32(len(docs))
			prog.Docs.Add(int64(len(docs)))
			prog.Done.Store(int64(src.Stats().Units))
			select {
			case read <- b:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
	})

	// Tokenize and chunk: each worker tokenizes a document once, without
	// special tokens or truncation, and cuts it for every window size.
	prep := new(errgroup.Group)
	for range cfg.Workers {
		prep.Go(func() error {
			var res chunk.Result
			var spans []chunk.Span
			for b := range read {
				for di, d := range b.docs {
					text := d.Full()
					enc := tok.EncodeWith(text, tokenizer.Options{NoSpecial: true, MaxLength: -1})
					spans = chunk.Spans(spans, enc.Offsets)
					if err := ch.Split(text, spans, &res); err != nil {
						return fmt.Errorf("msrag: document %q: %w", d.ID, err)
					}
					doc := b.base + int32(di)
					first := len(b.items)
					for _, c := range res.Chunks {
						b.items = append(b.items, item{
							doc: doc, tokStart: int32(c.Tokens.Start), tokEnd: int32(c.Tokens.End),
							byteStart: int64(c.Bytes.Start), byteEnd: int64(c.Bytes.End),
							ids: enc.IDs[c.Tokens.Start:c.Tokens.End:c.Tokens.End],
						})
						b.tokens += int64(c.Tokens.Len())
					}
					for wi, list := range res.Windows {
						for _, ci := range list {
							b.items[first+int(ci)].member |= 1 << wi
						}
					}
					if cfg.Full && len(spans) > 0 {
						// The document truncated as the model would: its first
						// maxContent tokens, unless a window already is that range.
						end := min(len(spans), maxContent)
						found := false
						for i := first; i < len(b.items); i++ {
							if b.items[i].tokStart == 0 && int(b.items[i].tokEnd) == end {
								b.items[i].member |= fullBit
								found = true
								break
							}
						}
						if !found {
							b.items = append(b.items, item{
								doc: doc, tokStart: 0, tokEnd: int32(end),
								byteStart: int64(spans[0].Start), byteEnd: int64(spans[end-1].End),
								ids: enc.IDs[:end:end], member: fullBit,
							})
							b.tokens += int64(end)
						}
					}
				}
				select {
				case prepped <- b:
				case <-gctx.Done():
					return gctx.Err()
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		err := prep.Wait()
		close(prepped)
		return err
	})

	// Order and batch: put document batches back in input order, record the
	// documents, and cut the chunks into embedder batches by token count.
	g.Go(func() error {
		defer close(toEmbed)
		pending := map[int]*docBatch{}
		want := 0
		cur := &embedBatch{}
		send := func() error {
			if len(cur.items) == 0 {
				return nil
			}
			select {
			case toEmbed <- cur:
			case <-gctx.Done():
				return gctx.Err()
			}
			cur = &embedBatch{}
			return nil
		}
		for b := range prepped {
			pending[b.seq] = b
			for {
				b, ok := pending[want]
				if !ok {
					break
				}
				delete(pending, want)
				want++
				for _, d := range b.docs {
					ids = append(ids, d.ID)
					titles = append(titles, d.Title)
				}
				for _, it := range b.items {
					cur.items = append(cur.items, it)
					cur.tokens += int64(len(it.ids))
					if cur.tokens >= int64(cfg.BatchTokens) {
						if err := send(); err != nil {
							return err
						}
					}
				}
			}
		}
		return send()
	})

	// Embed: one batch at a time; the embedder uses every core itself.
	g.Go(func() error {
		defer close(toAdd)
		seqs := make([][]int32, 0, 1024)
		for b := range toEmbed {
			seqs = seqs[:0]
			for _, it := range b.items {
				seqs = append(seqs, it.ids)
			}
			t0 := time.Now()
			vecs, err := emb.EmbedTokens(gctx, seqs, onnx.Passage)
			embedBusy.Add(int64(time.Since(t0)))
			if err != nil {
				return err
			}
			b.vecs = vecs
			prog.Chunks.Add(int64(len(b.items)))
			prog.Tokens.Add(b.tokens)
			select {
			case toAdd <- b:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})

	// Add: every vector goes to the index of each window size it belongs to.
	var unique int64
	g.Go(func() error {
		dims := emb.Dims()
		for b := range toAdd {
			for i, it := range b.items {
				v := b.vecs[i*dims : (i+1)*dims]
				for wi, w := range windows {
					if it.member&(1<<wi) == 0 {
						continue
					}
					w.chunks.add(it.doc, it.tokStart, it.tokEnd, it.byteStart, it.byteEnd)
					if err := w.push(v, cfg.TrainSize); err != nil {
						return err
					}
				}
			}
			unique += int64(len(b.items))
		}
		for _, w := range windows {
			if err := w.flush(true); err != nil {
				return err
			}
		}
		return nil
	})

	err = g.Wait()
	rep.finish()
	if err != nil {
		closeWindows(windows)
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("msrag: build stopped: %w", ctx.Err())
		}
		return nil, nil, err
	}
	if len(ids) == 0 {
		closeWindows(windows)
		return nil, nil, fmt.Errorf("msrag: the corpus has no documents: %w", corpus.ErrEmpty)
	}

	stats := &BuildStats{
		Docs: int64(len(ids)), Skipped: prog.Skipped.Load(), UniqueChunks: unique,
		Tokens: prog.Tokens.Load(), EmbedBusy: time.Duration(embedBusy.Load()),
	}
	man := &Manifest{
		FormatVersion: FormatVersion,
		Model:         modelInfoOf(emb),
		Factory:       cfg.Factory,
		Metric:        cfg.Metric.String(),
		Docs:          int64(len(ids)),
		DocsFile:      "docs.parquet",
		UniqueChunks:  unique,
		Tokens:        stats.Tokens,
		Skipped:       stats.Skipped,
		Shard:         cfg.Shard,
		Created:       time.Now().UTC().Truncate(time.Second),
	}
	for _, w := range windows {
		wi := WindowInfo{
			Size: w.size, Stride: w.stride, Vectors: w.index.Ntotal(),
			IndexFile:  fmt.Sprintf("w%d.faiss", w.size),
			ChunksFile: fmt.Sprintf("w%d.chunks.parquet", w.size),
		}
		if w.full {
			wi.Full, wi.Stride = true, 0
			wi.IndexFile, wi.ChunksFile = "full.faiss", "full.chunks.parquet"
		}
		man.Windows = append(man.Windows, wi)
		stats.Vectors = append(stats.Vectors, w.index.Ntotal())
	}
	ix := &Index{man: man, emb: emb, shards: []*shard{{ids: ids, titles: titles, windows: windows}}}
	if err := ix.indexDocs(); err != nil {
		ix.Close()
		return nil, nil, err
	}
	if cfg.Out != "" {
		man.BuildSeconds = time.Since(start).Seconds()
		if err := ix.save(ctx, cfg.Out); err != nil {
			ix.Close()
			return nil, nil, err
		}
		ix.dir = cfg.Out
	}
	stats.Wall = time.Since(start)
	return ix, stats, nil
}

// save writes the index into a temporary sibling of dir and renames it into place.
func (ix *Index) save(ctx context.Context, dir string) (err error) {
	tmp, err := stageDir(dir)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	sh := ix.shards[0]
	man := ix.man
	if err := writeDocTable(filepath.Join(tmp, man.DocsFile), sh.ids, sh.titles); err != nil {
		return err
	}
	if man.DocsSHA256, err = fileSHA256(filepath.Join(tmp, man.DocsFile)); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	for i, w := range sh.windows {
		if ctx.Err() != nil {
			return fmt.Errorf("msrag: build stopped: %w", ctx.Err())
		}
		wi := &man.Windows[i]
		if err := w.index.WriteFile(filepath.Join(tmp, wi.IndexFile)); err != nil {
			return fmt.Errorf("msrag: window %d: %w", w.size, err)
		}
		if err := writeChunkTable(filepath.Join(tmp, wi.ChunksFile), w.chunks); err != nil {
			return err
		}
		if wi.IndexSHA256, err = fileSHA256(filepath.Join(tmp, wi.IndexFile)); err != nil {
			return fmt.Errorf("msrag: %w", err)
		}
		if wi.ChunkSHA256, err = fileSHA256(filepath.Join(tmp, wi.ChunksFile)); err != nil {
			return fmt.Errorf("msrag: %w", err)
		}
	}
	if err := writeManifest(tmp, man); err != nil {
		return err
	}
	return publishDir(tmp, dir)
}
