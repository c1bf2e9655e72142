package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
)

// parseInts parses a comma-separated list of positive integers, such as
// --windows 100,200,500, and rejects zero, negative and repeated values.
func parseInts(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--%s is empty: give sizes such as 100,200,500", flag)
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		switch {
		case err != nil:
			return nil, usagef("--%s %q: %q is not a number", flag, s, f)
		case v <= 0:
			return nil, usagef("--%s %q: %d is not positive", flag, s, v)
		case slices.Contains(out, v):
			return nil, usagef("--%s %q: %d is repeated", flag, s, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// windowsFlag parses --windows into sliding windows with --stride and
// --short-tail (when the command has them).
func windowsFlag(c *cli.Context) ([]chunk.Window, error) {
	sizes, err := parseInts("windows", c.String("windows"))
	if err != nil {
		return nil, err
	}
	ws := chunk.Sizes(sizes...)
	for i := range ws {
		ws[i].Stride, ws[i].ShortTail = c.Int("stride"), c.Bool("short-tail")
	}
	return ws, nil
}

// strideFlag sets the step between a window's starts; index and eval share
// it so that eval reuses an index built with it.
func strideFlag() cli.Flag {
	return &cli.IntFlag{Name: "stride", Usage: "step between window starts in tokens (0: each window's own size, no overlap)"}
}

// shortTailFlag keeps each document's last window where the stride puts it.
func shortTailFlag() cli.Flag {
	return &cli.BoolFlag{Name: "short-tail", Usage: "keep each document's last window where the stride puts it, shorter than the window (as indices before the tail was recorded); default: moved back to end at the document's end, full size"}
}

// parseShard parses --shard i/n.
func parseShard(s string) (corpus.Shard, error) {
	if s == "" {
		return corpus.Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return corpus.Shard{}, usagef("--shard %q: want i/n with 0 <= i < n", s)
	}
	return corpus.Shard{I: i, N: n}, nil
}

// corpusFlags name the columns of the corpus.
func corpusFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "id-col", Value: "_id", Usage: "id column (Parquet, Arrow) or key (JSONL)"},
		&cli.StringFlag{Name: "title-col", Value: "title", Usage: "title column or key (absent: no titles)"},
		&cli.StringFlag{Name: "text-col", Value: "text", Usage: "text column or key"},
		&cli.IntFlag{Name: "max-doc-bytes", Value: corpus.DefaultMaxDocBytes, Usage: "the longest JSONL line (one document) read, in bytes, up to 268435456: a longer one is refused before it is tokenized (a build's memory peaks at some 25 times its largest document)"},
	}
}

// corpusOptions maps the corpus flags, refusing a --max-doc-bytes out of
// range before any work.
func corpusOptions(c *cli.Context, cmd string) (corpus.Options, error) {
	o := corpus.Options{
		IDColumn:    c.String("id-col"),
		TitleColumn: c.String("title-col"),
		TextColumn:  c.String("text-col"),
		MaxDocBytes: c.Int("max-doc-bytes"),
	}
	if o.MaxDocBytes < 1 || o.MaxDocBytes > 256<<20 {
		return o, usagef("%s: --max-doc-bytes %d: want 1 to %d", cmd, o.MaxDocBytes, 256<<20)
	}
	return o, nil
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// openCorpusReader opens a corpus file or directory. A BEIR/MTEB dataset
// directory (corpus + queries + qrels/) opens its corpus; any other directory is
// read as .txt/.md files.
func openCorpusReader(path string, opts corpus.Options) (corpus.Reader, error) {
	if isDataset(path) {
		ds, err := corpus.OpenDataset(path)
		if err != nil {
			return nil, err
		}
		return ds.OpenCorpus(opts)
	}
	return corpus.Open(path, opts)
}

// isDataset reports whether path is a directory with a qrels folder.
func isDataset(path string) bool {
	st, err := os.Stat(filepath.Join(path, "qrels"))
	return err == nil && st.IsDir()
}

// queriesPath returns the queries file of a dataset directory, or path itself.
func queriesPath(path string) (string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		ds, err := corpus.OpenDataset(path)
		if err != nil {
			return "", err
		}
		return ds.Queries, nil
	}
	return path, nil
}

// atLeastOne refuses the first of the integer flags names whose value is
// below 1, naming it and its value.
func atLeastOne(c *cli.Context, cmd string, names ...string) error {
	for _, n := range names {
		if v := c.Int(n); v < 1 {
			return usagef("%s: --%s %d: must be at least 1", cmd, n, v)
		}
	}
	return nil
}

// quietFlag is --quiet, for the commands that print progress or notes.
func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Usage: "no progress or notes on standard error (errors and the closing line saying what was written remain)"}
}

// noteWriter is where progress and notes go: standard error, or nowhere
// with --quiet.
func noteWriter(c *cli.Context) io.Writer {
	if c.Bool("quiet") {
		return io.Discard
	}
	return c.App.ErrWriter
}
