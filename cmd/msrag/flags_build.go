package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/lexical"
)

// buildFlags maps the flags of an index's build that index and eval share
// to one build configuration (no embedder and no directory yet): the
// windows, the tokenizer of --model none, the embedding, the lexical
// windows and other kinds of channel, --workers and --wait. It returns
// every embedding --embedding lists (eval may compare several; the
// configuration has the first). embeddings is eval's: it also searches, so
// its device flags place the FAISS indices too (modelOptions).
func buildFlags(c *cli.Context, cmd string, embeddings bool) (msrag.Config, []msrag.Embedding, error) {
	windows, err := windowsFlag(c)
	if err != nil {
		return msrag.Config{}, nil, err
	}
	modes, lf, err := embeddingsFlag(c, embeddings)
	if err != nil {
		return msrag.Config{}, nil, err
	}
	if err := checkWorkers(c, cmd); err != nil {
		return msrag.Config{}, nil, err
	}
	cfg := msrag.Config{Windows: windows, Workers: c.Int("workers"), Wait: c.Bool("wait"),
		Embedding: modes[0], LateOverlap: lf.overlap, LateEdges: lf.edges}
	if noModel(c) {
		if cfg.Tokenizer, err = windowTokenizer(c, cmd); err != nil {
			return msrag.Config{}, nil, err
		}
	}
	if err := checkModelFlags(c, cmd); err != nil {
		return msrag.Config{}, nil, err
	}
	if _, err := modelOptions(c, cmd, embeddings); err != nil {
		return msrag.Config{}, nil, err
	}
	if cfg.Lexical, err = lexicalFlags(c, cmd); err != nil {
		return msrag.Config{}, nil, err
	}
	if cfg.Channels, err = channelFlags(c, cmd); err != nil {
		return msrag.Config{}, nil, err
	}
	return cfg, modes, nil
}

// lexicalFlagSet are the flags of lexical windows and other kinds of
// channel (index and eval).
func lexicalFlagSet() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "channel", Usage: "another kind of channel to build beside the dense and lexical windows, by its registered name (repeatable; this msrag registers " + strings.Join(channel.Names(), ", ") + ": kinds are packages a program imports)"},
		&cli.BoolFlag{Name: "no-lexical", Usage: "build no lexical windows (by default an index also holds BM25 over every window's chunks and over whole documents, fused as bm25-w100, bm25-doc, windows=lexical, windows=all)"},
		&cli.BoolFlag{Name: "lexical", Usage: "build lexical windows (the default; kept for older command lines)"},
		&cli.StringFlag{Name: "lexical-analyzer", Value: "english", Usage: "analyzer of the lexical windows: english (stop words, Snowball stemming) or none (lower case only)"},
		&cli.Float64Flag{Name: "bm25-k1", Value: lexical.DefaultBM25.K1, Usage: "BM25 k1 of the lexical windows (0 to 3)"},
		&cli.Float64Flag{Name: "bm25-b", Value: lexical.DefaultBM25.B, Usage: "BM25 b of the lexical windows (0 to 1)"},
	}
}

// lexicalFlags maps the lexical flags to a configuration: lexical windows
// unless --no-lexical (nil); a lexical setting with --no-lexical is a usage
// error.
func lexicalFlags(c *cli.Context, cmd string) (*msrag.LexicalConfig, error) {
	if c.Bool("no-lexical") {
		for _, name := range []string{"lexical", "lexical-analyzer", "bm25-k1", "bm25-b"} {
			if c.IsSet(name) {
				return nil, usagef("%s: --%s is for lexical windows, which --no-lexical leaves out", cmd, name)
			}
		}
		return nil, nil
	}
	a, err := lexical.ParseAnalyzer(c.String("lexical-analyzer"))
	if err != nil {
		return nil, usagef("%s: --lexical-analyzer: %w", cmd, err)
	}
	k1, b := c.Float64("bm25-k1"), c.Float64("bm25-b")
	switch { // the bounds of lexical.BM25.Validate, said flag by flag
	case !(k1 >= 0 && k1 <= lexical.MaxK1):
		return nil, usagef("%s: --bm25-k1 %v: want a number from 0 to %d (Lucene's and bm25s's range in practice; far beyond it every score rounds to 0)", cmd, k1, lexical.MaxK1)
	case !(b >= 0 && b <= 1):
		return nil, usagef("%s: --bm25-b %v: want a number from 0 to 1", cmd, b)
	}
	return &msrag.LexicalConfig{Analyzer: a, BM25: lexical.BM25{K1: k1, B: b}}, nil
}

// channelFlags maps --channel to the build's other kinds of channel.
func channelFlags(c *cli.Context, cmd string) ([]msrag.ChannelConfig, error) {
	var out []msrag.ChannelConfig
	for _, name := range c.StringSlice("channel") {
		k, ok := channel.Lookup(strings.TrimSpace(name))
		switch {
		case !ok:
			return nil, usagef("%s: --channel %q: no such kind of channel (this msrag registers %s)", cmd, name, strings.Join(channel.Names(), ", "))
		case k == msrag.Dense || k == msrag.Lexical:
			return nil, usagef("%s: --channel %s: %s channels are built by default (--model none and --no-lexical leave them out)", cmd, name, name)
		case slices.ContainsFunc(out, func(o msrag.ChannelConfig) bool { return o.Kind == k }):
			return nil, usagef("%s: --channel %s is given twice", cmd, name)
		}
		out = append(out, msrag.ChannelConfig{Kind: k})
	}
	return out, nil
}

// maxWorkers bounds --workers: the build keeps 2 x workers + 2 batches in
// flight and starts a goroutine per worker, so a typo of 1000000000 would
// ask for gigabytes before reading a document.
const maxWorkers = 1024

// checkWorkers refuses a --workers above maxWorkers.
func checkWorkers(c *cli.Context, cmd string) error {
	if w := c.Int("workers"); w > maxWorkers {
		return usagef("%s: --workers %d is more than %d", cmd, w, maxWorkers)
	}
	return nil
}
