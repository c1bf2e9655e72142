package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/store"
)

func init() {
	register(&cli.Command{
		Name:  "index",
		Usage: "build a multi-scale index of a corpus",
		Description: "Reads the corpus (Parquet, Arrow IPC file or stream, BEIR corpus.jsonl[.gz], or a directory of\n" +
			".txt/.md files), tokenizes each document once, cuts it into windows of every size, embeds each\n" +
			"unique chunk once and writes one FAISS index and chunk table per window size into --out. The\n" +
			"directory is written beside --out and renamed into place when complete, so an interrupted\n" +
			"build leaves the previous index (or none). A lock beside --out (.NAME.lock) keeps two builds\n" +
			"of one directory apart: the second fails at once naming the first, or waits with --wait.\n\n" +
			"With --shard i/n only the corpus units that fall to shard i are indexed (Parquet row groups,\n" +
			"Arrow record batches, files of a directory, blocks of --block-lines JSONL lines: unit u goes\n" +
			"to shard u mod n). Search the shards together with msrag search --index DIR1,DIR2,...\n\n" +
			"--model none --tokenizer NAME (a model name as msrag tokenize --model takes, or a tokenizer.json path)\n" +
			"builds the channels that read texts alone: the windows cut by that tokenizer's tokens as a model of\n" +
			"it would cut them, each with its chunk table and those channels; no model run.\n\n" + remoteHelp,
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "corpus", Required: true, Usage: "corpus file or directory"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "index directory to write"},
			modelFlag(),
			&cli.StringFlag{Name: "windows", Value: "100,200,500", Usage: "window sizes in content tokens (when not given, sizes above what the model takes are lowered to it: 100,200,254 for all-minilm-l6-v2)"},
			strideFlag(),
			shortTailFlag(),
			&cli.StringFlag{Name: "shard", Usage: "i/n: index only shard i of n of the corpus"},
			&cli.IntFlag{Name: "block-lines", Value: 10000, Usage: "JSONL lines per sharding unit"},
			&cli.BoolFlag{Name: "dedupe-ids", Usage: "keep the first document of a repeated id instead of failing"},
			&cli.BoolFlag{Name: "full", Usage: "also index each document whole, truncated to the model's maximum (MTEB's way; search it with --fusion full)"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for another build of --out instead of failing"},
			&cli.BoolFlag{Name: "rebuild", Usage: "replace the index in --out (without it, an --out that holds an index is refused)"},
			&cli.IntFlag{Name: "workers", Usage: "tokenizer goroutines (0: all cores)"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
		}, append(append(corpusFlags(), channelFlagSet()...), embeddingFlags(false)...)...), append(deviceFlags(), remoteModelFlags()...)...),
		Action: indexAction,
	})
}

// indexConfig maps the flags to a build configuration (no embedder yet).
func indexConfig(c *cli.Context) (msrag.Config, corpus.Options, error) {
	if c.NArg() != 0 {
		return msrag.Config{}, corpus.Options{}, usagef("index: unexpected arguments %v", c.Args().Slice())
	}
	out, err := outFlag(c, "index")
	if err != nil {
		return msrag.Config{}, corpus.Options{}, err
	}
	if err := store.CheckReplaceable(out); err != nil { // checked again once the lock is held
		return msrag.Config{}, corpus.Options{}, usagef("index: --out: %w", err)
	}
	if err := checkReplace(c, "index", out); err != nil {
		return msrag.Config{}, corpus.Options{}, err
	}
	shard, err := parseShard(c.String("shard"))
	if err != nil {
		return msrag.Config{}, corpus.Options{}, err
	}
	if _, err := embedderOptions(c); err != nil {
		return msrag.Config{}, corpus.Options{}, err
	}
	if c.Int("block-lines") < 0 {
		return msrag.Config{}, corpus.Options{}, usagef("index: --block-lines %d is negative", c.Int("block-lines"))
	}
	cfg, _, err := buildFlags(c, "index", false)
	if err != nil {
		return msrag.Config{}, corpus.Options{}, err
	}
	cfg.Out = c.String("out")
	if c.Bool("full") {
		cfg.Windows = append(cfg.Windows, chunk.Full)
	}
	if shard.N > 1 {
		cfg.Shard = fmt.Sprintf("%d/%d", shard.I, shard.N)
	}
	copts, err := corpusOptions(c, "index")
	if err != nil {
		return msrag.Config{}, corpus.Options{}, err
	}
	copts.Shard, copts.BlockLines, copts.DedupeIDs = shard, c.Int("block-lines"), c.Bool("dedupe-ids")
	return cfg, copts, nil
}

func indexAction(c *cli.Context) error {
	cfg, copts, err := indexConfig(c)
	if err != nil {
		return err
	}
	if cfg.Tokenizer == nil {
		eo, err := modelOptions(c, "index", false)
		if err != nil {
			return err
		}
		emb, err := openEmbedder(c, c.String("model"), eo)
		if err != nil {
			return err
		}
		defer emb.Close()
		if err := checkModelChannels("index", cfg.Channels, emb.Spec().Dims); err != nil {
			return err
		}
		cfg.Embedder, cfg.Windows = emb, fitDefaultWindows(c, "index", cfg.Windows, emb.Spec())
	}
	src, err := openCorpusReader(c.String("corpus"), copts)
	if err != nil {
		return err
	}
	defer src.Close()
	if copts.Shard.N > 1 {
		describeShard(c.App.ErrWriter, c.String("corpus"), copts)
	}
	var bar *progressBar
	if !c.Bool("quiet") {
		bar = newProgressBar(c.App.ErrWriter, "index")
		cfg.Progress, cfg.Units = bar.callback(), expectedUnits(c.String("corpus"), copts)
	}
	_, had := os.Stat(filepath.Join(cfg.Out, "manifest.json"))
	ix, stats, err := msrag.BuildWithStats(c.Context, src, cfg)
	bar.finish()
	if err != nil {
		return asUsage(err)
	}
	defer ix.Close()
	if had == nil {
		fmt.Fprintf(c.App.ErrWriter, "index: replaced the index that was in %s (--rebuild)\n", cfg.Out)
	}
	st := src.Stats()
	if cfg.Embedder == nil {
		fmt.Fprintf(c.App.ErrWriter, "index: wrote %s (no model, windows cut by tokenizer %s): %d docs (%d skipped empty, %d duplicate, %d with invalid UTF-8 replaced), %d unique chunks, %d tokens, windows %v with %v chunks, %s\n",
			cfg.Out, cfg.Tokenizer.Name, stats.Docs, st.Empty, st.Duplicates, st.InvalidUTF8, stats.UniqueChunks, stats.Tokens,
			windowNames(ix.Manifest()), stats.Vectors, stats.Wall.Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(c.App.ErrWriter, "index: wrote %s (%s): %d docs (%d skipped empty, %d duplicate, %d with invalid UTF-8 replaced), %d unique chunks, %d tokens, windows %v with %v vectors, %s, %.0f tokens/s (embedder busy %.0f%%)\n",
		cfg.Out, embeddingOf(ix), stats.Docs, st.Empty, st.Duplicates, st.InvalidUTF8, stats.UniqueChunks, stats.Tokens,
		windowNames(ix.Manifest()), stats.Vectors, stats.Wall.Round(time.Millisecond), float64(stats.Tokens)/stats.Wall.Seconds(),
		100*stats.EmbedBusy.Seconds()/stats.Wall.Seconds())
	printRemoteStats(c.App.ErrWriter, "index", cfg.Embedder)
	return nil
}

// embeddingOf describes how an index's windows were embedded.
func embeddingOf(ix *msrag.Index) string {
	m := ix.Manifest()
	if m.Late == nil {
		return m.Embedding + " embedding"
	}
	return fmt.Sprintf("late embedding: segments of %d tokens sharing %d, edges %s", m.Late.SegmentTokens, m.Late.Overlap, m.Late.Edges)
}

// windowNames names the windows of an index of manifest m, in order.
func windowNames(m msrag.Manifest) string {
	names := make([]string, len(m.Windows))
	for i, w := range m.Windows {
		names[i] = w.Window().Name()
	}
	return strings.Join(names, ",")
}

// describeShard says how many units the corpus has and how many fall to the
// shard, so that an empty shard (more shards than units) is no surprise.
func describeShard(w io.Writer, path string, opts corpus.Options) {
	if isDataset(path) {
		if ds, err := corpus.OpenDataset(path); err == nil {
			path = ds.Corpus
		}
	}
	sh := opts.Shard
	opts.Shard = corpus.Shard{}
	n, err := corpus.CountUnits(path, opts)
	if err != nil {
		fmt.Fprintf(w, "index: shard %d/%d (units not counted: %v)\n", sh.I, sh.N, err)
		return
	}
	mine := (n - sh.I + sh.N - 1) / sh.N
	fmt.Fprintf(w, "index: %s has %d units (Parquet row groups, Arrow batches, files, or blocks of %d JSONL lines); shard %d/%d reads %d of them",
		path, n, opts.BlockLines, sh.I, sh.N, max(mine, 0))
	if mine <= 0 {
		fmt.Fprintf(w, " and will be an empty index (a smaller --block-lines gives more units)")
	}
	fmt.Fprintln(w)
}

// expectedUnits counts the corpus units this build will read, for the ETA, where
// that is cheap: from Parquet and Arrow file metadata or a directory listing.
// JSONL and Arrow streams would have to be read through: 0 (no ETA).
func expectedUnits(path string, opts corpus.Options) int {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	ext := strings.ToLower(filepath.Ext(path))
	if !st.IsDir() && ext != ".parquet" && ext != ".arrow" && ext != ".feather" {
		return 0
	}
	if st.IsDir() && isDataset(path) {
		return 0 // a dataset directory: its corpus is usually JSONL
	}
	sh := opts.Shard
	opts.Shard = corpus.Shard{}
	n, err := corpus.CountUnits(path, opts)
	if err != nil || n <= 0 {
		return 0
	}
	if sh.N > 1 {
		return (n - sh.I + sh.N - 1) / sh.N // units u < n with u mod N == I
	}
	return n
}
