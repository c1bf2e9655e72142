package main

import (
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/onnx"
)

// noModel reports whether --model is none: an index of text channels
// only, cut by --tokenizer, with nothing embedded.
func noModel(c *cli.Context) bool { return c.String("model") == msrag.NoModel }

// noModelFlags are the flags that mean nothing without a model: a usage
// error with --model none.
var noModelFlags = []string{"full", "factory", "metric", "late-overlap", "late-edges", "endpoints", "server-tokenizer",
	"input-type", "query-prefix", "passage-prefix", "max-tokens", "headroom", "no-normalize", "cv-folds"}

// windowTokenizer checks the flags of --model none and loads --tokenizer:
// a tokenizer.json path, a model directory, or a model name as msrag
// tokenize --model takes (its tokenizer.json in the model cache). Every
// mistake is a usage error, found before any document is read.
func windowTokenizer(c *cli.Context, cmd string) (*msrag.WindowTokenizer, error) {
	name := c.String("tokenizer")
	if name == "" {
		return nil, usagef("%s: --model none needs --tokenizer NAME (a model name as msrag tokenize --model takes, or a tokenizer.json path): it cuts the windows", cmd)
	}
	for _, f := range noModelFlags {
		if c.IsSet(f) {
			return nil, usagef("%s: --%s needs a model, and --model none has none", cmd, f)
		}
	}
	if c.IsSet("embedding") && c.String("embedding") != msrag.Independent.String() {
		return nil, usagef("%s: --embedding %s needs a model, and --model none has none", cmd, c.String("embedding"))
	}
	path, err := tokenizerPath(name)
	if err != nil {
		return nil, usagef("%s: --tokenizer %s: %w", cmd, name, err)
	}
	wt, err := msrag.LoadWindowTokenizer(name, path)
	if err != nil {
		return nil, usageError{err}
	}
	return wt, nil
}

// tokenizerPath resolves --tokenizer: a file is a tokenizer.json, a
// directory holds one, anything else is a model name (modelTokenizerPath).
func tokenizerPath(name string) (string, error) {
	st, err := os.Stat(name)
	switch {
	case err == nil && !st.IsDir():
		return name, nil
	case err == nil:
		return filepath.Join(name, onnx.TokenizerFile), nil
	}
	return modelTokenizerPath(name)
}
