package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/testkind"
	"github.com/msrag/msrag/lexical"
)

// TestIndexAndEvalBuildAlike checks that index and eval map the build flags
// they share to the same configuration (one mapping, buildFlags), so that
// eval reuses what msrag index built with the same flags.
func TestIndexAndEvalBuildAlike(t *testing.T) {
	shared := []string{"--windows", "16,32", "--stride", "8", "--short-tail", "--embedding", "late", "--late-overlap", "4",
		"--late-edges", "none", "--lexical-analyzer", "none", "--bm25-k1", "1.5", "--bm25-b", "0.6", "--workers", "3", "--wait"}
	var fromIndex, fromEval msrag.Config
	app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {}}
	for _, name := range []string{"index", "eval"} {
		cmd := *commandNamed(t, name)
		cmd.Before, cmd.After = nil, nil
		cmd.Action = func(c *cli.Context) error {
			if name == "index" {
				cfg, _, err := indexConfig(c)
				fromIndex = cfg
				return err
			}
			spec, _, err := evalSpec(c)
			fromEval = spec.Build
			return err
		}
		app.Commands = append(app.Commands, &cmd)
	}
	dir := t.TempDir()
	if err := app.Run(append([]string{"msrag", "index", "--corpus", "c.jsonl", "--out", dir + "/a"}, shared...)); err != nil {
		t.Fatalf("index: %v", err)
	}
	if err := app.Run(append([]string{"msrag", "eval", "--dataset", "d", "--out", dir + "/b", "--index", dir + "/a"}, shared...)); err != nil {
		t.Fatalf("eval: %v", err)
	}
	if fromIndex.Out != fromEval.Out || fromIndex.Windows[0].Stride != 8 || !fromIndex.Windows[0].ShortTail || len(fromIndex.Channels) != 2 || fromIndex.Embedding != msrag.Late || fromIndex.Workers != 3 || !fromIndex.Wait {
		t.Fatalf("index %+v, eval %+v", fromIndex, fromEval)
	}
	if got := fromIndex.Channels[1]; got != (bm25.Config{Analyzer: lexical.None, BM25: lexical.BM25{K1: 1.5, B: 0.6}}) {
		t.Errorf("lexical parameters %+v", got)
	}
	if !reflect.DeepEqual(fromIndex, fromEval) {
		t.Errorf("the same build flags:\nindex %+v\neval  %+v", fromIndex, fromEval)
	}
}

func commandNamed(t *testing.T, name string) *cli.Command {
	t.Helper()
	for _, c := range commands {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no command %s", name)
	return nil
}

// TestChannelFlags checks that --channel NAME:KEY=VALUE,... reaches each
// kind's parameters through its flag table (a value with a comma
// included), beside the older flags of the built-in kinds, and that a key
// given both ways is a usage error.
func TestChannelFlags(t *testing.T) {
	var got msrag.Config
	app := &cli.App{Writer: io.Discard, ErrWriter: io.Discard, ExitErrHandler: func(*cli.Context, error) {}}
	cmd := *commandNamed(t, "index")
	cmd.Before, cmd.After = nil, nil
	cmd.Action = func(c *cli.Context) error {
		cfg, _, err := indexConfig(c)
		got = cfg
		return err
	}
	app.Commands = []*cli.Command{&cmd}
	out := t.TempDir() + "/a"
	args := []string{"msrag", "index", "--corpus", "c.jsonl", "--out", out, "--channel", "dense:factory=IVF4,Flat,metric=l2",
		"--channel", "overlap:weight=rare,min=2", "--bm25-k1", "1.2"}
	if err := app.Run(args); err != nil {
		t.Fatal(err)
	}
	want := []channel.Params{
		dense.Params{Factory: "IVF4,Flat", Metric: faiss.L2, TrainSize: 1 << 16},
		bm25.Config{Analyzer: lexical.English, BM25: lexical.BM25{K1: 1.2, B: 0.4}},
		testkind.Params{Min: 2, Weight: testkind.Rare},
	}
	if !reflect.DeepEqual(got.Channels, want) {
		t.Errorf("channels %+v, want %+v", got.Channels, want)
	}
	err := app.Run([]string{"msrag", "index", "--corpus", "c.jsonl", "--out", out, "--factory", "HNSW32", "--channel", "dense:factory=Flat"})
	if err == nil || !strings.Contains(err.Error(), "--factory and --channel dense:factory=... both given") {
		t.Errorf("a key given both ways: %v", err)
	}
}
