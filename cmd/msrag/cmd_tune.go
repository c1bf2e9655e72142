package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/tune"
)

func init() {
	register(&cli.Command{
		Name:  "tune",
		Usage: "learn a fusion rule and a query router on labelled training queries",
		Description: "Searches the split's judged queries once in --index (built by msrag eval or msrag index), then\n" +
			"fits the linear rule (per window: a document's z-scored score, 1/(rank+1) and its chunk votes)\n" +
			"by coordinate ascent on nDCG@10, and a query router (a logistic model from the query's embedding\n" +
			"and label-free features of every window's list to window weights) whose penalty --folds-fold\n" +
			"cross-validation chooses. Writes --out (fusion.json): the rule, the router, the training\n" +
			"queries' ids, and the scores of what was tried. msrag eval --fusion-model evaluates it, and\n" +
			"refuses queries it was trained on; msrag search --fusion-model searches with it. An index without\n" +
			"dense windows (msrag index --model none) gets the linear rule alone: the router reads the query's\n" +
			"embedding, which such an index has not.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "dataset", Required: true, Usage: "dataset directory in BEIR layout"},
			&cli.StringFlag{Name: "split", Value: "train", Usage: "the training split"},
			&cli.StringFlag{Name: "index", Required: true, Usage: "index of the dataset's corpus"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "fusion model file to write"},
			&cli.IntFlag{Name: "folds", Value: 5, Usage: "cross-validation folds for the router's penalty"},
			&cli.IntFlag{Name: "window-k", Value: 100, Usage: "chunks each window's index returns per query"},
			&cli.IntFlag{Name: "batch", Value: 1024, Usage: "queries embedded and searched at once"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
		}, deviceFlags()...),
		Action: tuneAction,
	})
}

func tuneAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("tune: unexpected arguments %v", c.Args().Slice())
	}
	if _, err := outFlag(c, "tune"); err != nil {
		return err
	}
	if c.Int("folds") < 2 || c.Int("window-k") < 1 || c.Int("batch") < 1 {
		return usagef("tune: --folds must be at least 2, --window-k and --batch at least 1")
	}
	if _, err := embedderOptions(c); err != nil {
		return err
	}
	ds, err := corpus.OpenDataset(c.String("dataset"))
	if err != nil {
		return err
	}
	if err := experiment.CheckSource(c.String("index"), ds.Corpus); err != nil {
		return fmt.Errorf("tune: --index and --dataset disagree: %w", err)
	}
	ix, err := openIndex(c, c.String("index"))
	if err != nil {
		return err
	}
	defer ix.Close()
	set, err := tune.Load(c.Context, ix, c.String("dataset"), c.String("split"), c.Int("batch"), c.Int("window-k"))
	if err != nil {
		return err
	}
	o := tune.Options{Folds: c.Int("folds")}
	if !c.Bool("quiet") {
		o.Log = c.App.ErrWriter
	}
	tr := tune.Training{Dataset: filepath.Base(filepath.Clean(c.String("dataset"))), Split: c.String("split")}
	m, err := tune.Fit(ix, set, tr, o)
	if err != nil {
		return err
	}
	if err := m.Write(c.String("out")); err != nil {
		return err
	}
	router := "no router: the index has no dense windows, and a router reads the query's embedding"
	if m.Router != nil {
		router = fmt.Sprintf("router penalty %g", m.Router.Lambda)
	}
	fmt.Fprintf(c.App.ErrWriter, "tune: wrote %s: %s (%s) from %d queries of %s %s\n",
		c.String("out"), m.Rule, router, len(set.IDs), tr.Dataset, tr.Split)
	return nil
}
