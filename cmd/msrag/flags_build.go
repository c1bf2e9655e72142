package main

import (
	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
)

// buildFlags maps the flags of an index's build that index and eval share
// to one build configuration (no embedder and no directory yet): the
// windows, the tokenizer of --model none, the embedding, the kinds of
// channel with their parameters, --workers and --wait. It returns
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
	if cfg.Channels, err = channelFlags(c, cmd, cfg.Tokenizer == nil); err != nil {
		return msrag.Config{}, nil, err
	}
	return cfg, modes, nil
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
