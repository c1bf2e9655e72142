package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/router"
	"github.com/msrag/msrag/tune"
)

func init() {
	register(&cli.Command{
		Name:  "tune",
		Usage: "learn a fusion rule and a query router on labelled training queries",
		Description: "Searches the split's judged queries once in --index (built by msrag eval or msrag index), then\n" +
			"fits the linear rule (per window: a document's z-scored score, 1/(rank+1) and its chunk votes)\n" +
			"by coordinate ascent on nDCG@10, and a query router (a logistic model from label-free features\n" +
			"to window weights) whose penalty --folds-fold cross-validation chooses. Writes --out\n" +
			"(fusion.json): the rule, the router, the training queries' ids, and the scores of what was\n" +
			"tried. msrag eval --fusion-model evaluates it, and refuses queries it was trained on; msrag\n" +
			"search --fusion-model searches with it.\n\n" +
			"Several datasets: --dataset A --index IA --dataset B --index IB fits one model on the training\n" +
			"queries of all of them (the i-th --index holds the i-th dataset's corpus; indices of one model\n" +
			"and one set of windows), each dataset weighing the same in the score it maximises. --router\n" +
			"says what the router reads: embedding (the query's embedding and every window's top, gap,\n" +
			"entropy and agree: the default for one dataset) or kinds (every kind's label-free features and\n" +
			"every window's agree, no embedding and no raw score, so that they mean the same on every\n" +
			"dataset: the default for several). A model whose router reads kinds, or that has none, serves\n" +
			"indices of other models with the same channels (docs/fusion.md).",
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "dataset", Required: true, Usage: "dataset directory in BEIR layout (repeatable, one per --index)"},
			&cli.StringFlag{Name: "split", Value: "train", Usage: "the training split (of every dataset)"},
			&cli.StringSliceFlag{Name: "index", Required: true, Usage: "index of the dataset's corpus (repeatable, one per --dataset, in the same order)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "fusion model file to write"},
			&cli.StringFlag{Name: "router", Usage: "what the router reads: embedding or kinds (default: embedding for one dataset, kinds for several)"},
			&cli.Float64Flag{Name: "loss-aversion", Usage: "count a training query's loss of nDCG@10 against the index's default fusion 1+this times (0: maximise mean nDCG@10)"},
			&cli.IntFlag{Name: "folds", Value: 5, Usage: "cross-validation folds for the router's penalty"},
			&cli.IntFlag{Name: "window-k", Value: 100, Usage: "chunks each window's index returns per query"},
			&cli.IntFlag{Name: "batch", Value: 1024, Usage: "queries embedded and searched at once"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
		}, deviceFlags()...),
		Action: tuneAction,
	})
}

// routerFeatures maps --router to a feature set ("" when not given).
var routerFeatures = map[string]router.FeatureSet{"embedding": router.EmbeddingWindows, "kinds": router.Kinds}

func tuneAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("tune: unexpected arguments %v", c.Args().Slice())
	}
	if err := tuneOut(c); err != nil {
		return err
	}
	if c.Int("folds") < 2 || c.Int("window-k") < 1 || c.Int("batch") < 1 {
		return usagef("tune: --folds must be at least 2, --window-k and --batch at least 1")
	}
	if a := c.Float64("loss-aversion"); !(a >= 0) || math.IsInf(a, 1) {
		return usagef("tune: --loss-aversion %g: want a finite number, 0 or more", a)
	}
	datasets, indices := c.StringSlice("dataset"), c.StringSlice("index")
	if len(datasets) != len(indices) {
		return usagef("tune: %d --dataset and %d --index: give one index per dataset, in the same order", len(datasets), len(indices))
	}
	fs, ok := routerFeatures[c.String("router")]
	if !ok && c.IsSet("router") {
		return usagef("tune: --router %q: want embedding or kinds", c.String("router"))
	}
	if _, err := embedderOptions(c); err != nil {
		return err
	}
	ixs := make([]msrag.Searcher, len(datasets))
	for i, d := range datasets {
		ix, err := openSource(c, d, indices[i])
		if err != nil {
			return err
		}
		defer ix.Close()
		ixs[i] = ix
	}
	if err := tune.CheckIndices(ixs); err != nil {
		return err
	}
	var ss tune.Sets
	var trs []tune.Training
	for i, d := range datasets {
		set, err := tune.Load(c.Context, ixs[i], d, c.String("split"), c.Int("batch"), c.Int("window-k"))
		if err != nil {
			return err
		}
		ss = append(ss, set)
		trs = append(trs, tune.Training{Dataset: filepath.Base(filepath.Clean(d)), Split: c.String("split")})
	}
	o := tune.Options{Folds: c.Int("folds"), Features: fs, LossAversion: c.Float64("loss-aversion")}
	if !c.Bool("quiet") {
		o.Log = c.App.ErrWriter
	}
	m, err := tune.Fit(ss, trs, o)
	if err != nil {
		return err
	}
	if _, err := safefile.WriteOutput(c.Context, c.String("out"), m.Encode); err != nil {
		return fmt.Errorf("tune: writing fusion model %s: %w", c.String("out"), err)
	}
	desc := "no router"
	if m.Router != nil {
		desc = fmt.Sprintf("router of %s, penalty %g", m.Router.Set(), m.Router.Lambda)
	}
	fmt.Fprintf(c.App.ErrWriter, "tune: wrote %s: %s (%s) from %d queries of %s, split %s\n",
		c.String("out"), m.Rule, desc, ss.Queries(), strings.Join(datasets, ", "), c.String("split"))
	return nil
}

// tuneOut checks --out before any work: a file one can write, and not a
// name that --fusion-model reads as a built-in fusion model (transfer),
// which would never read the file written.
func tuneOut(c *cli.Context) error {
	out, err := outFileFlag(c, "tune")
	if err != nil {
		return err
	}
	if _, builtin, err := tune.ParseBuiltin(out); builtin || err != nil {
		return usagef("tune: --out %s: --fusion-model %s names the built-in fusion model, so a file of that name would never be read as written: "+
			"give another name (such as %s.json), or ./%s to write it there and read it back by that path", out, out, out, out)
	}
	return nil
}

// openSource opens the index of a dataset's corpus, after checking that it
// is built from that corpus.
func openSource(c *cli.Context, dataset, index string) (*msrag.Index, error) {
	ds, err := corpus.OpenDataset(dataset)
	if err != nil {
		return nil, err
	}
	if err := experiment.CheckSource(index, ds.Corpus); err != nil {
		return nil, fmt.Errorf("tune: --index %s and --dataset %s disagree: %w", index, dataset, err)
	}
	return openIndex(c, index)
}
