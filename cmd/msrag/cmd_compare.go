package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/report"
)

func init() {
	register(&cli.Command{
		Name:      "compare",
		Usage:     "compare runs query by query: msrag eval output directories, or TREC runs of any system with --qrels",
		ArgsUsage: "RUN RUN [RUN...]",
		Description: "Without --qrels, each RUN is an output directory of msrag eval (or its results.json): every\n" +
			"configuration the runs share is shown in each, paired with the first run's over the same queries\n" +
			"(runs that differ in how they were built: the embedding, late chunking's edges, an index factory).\n" +
			"With --qrels, each RUN is a TREC run file (of msrag or any system), scored as msrag score scores it\n" +
			"and paired with the first run, the baseline.\n\n" +
			"Each pair gives the mean difference on --metric, its 95% paired bootstrap interval, the queries won,\n" +
			"tied and lost, and two-sided p-values of the paired t-test and of Fisher's randomization test (exact\n" +
			"up to 30 queries, else 10,000 random assignments of signs, with twice its standard error); with one\n" +
			"baseline against two runs or more, Holm's adjustment over those comparisons (docs/eval.md).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "qrels", Usage: "judgements: compare TREC run files scored against them"},
			&cli.StringFlag{Name: "metric", Value: experiment.PairedMetric, Usage: "the metric compared (ndcg_cut_10, map_cut_100, recall_100, P_10, mrr_10, cdr_5, ...)"},
			&cli.StringFlag{Name: "json", Usage: "also write the comparison as JSON to this file"},
		}, scoringFlags()...),
		Action: compareAction,
	})
}

func compareAction(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return usagef("compare: give two runs or more (msrag eval output directories, or TREC run files with --qrels)")
	}
	metric := c.String("metric")
	if _, err := eval.ParseMetric(metric); err != nil {
		return usagef("compare: --metric: %w", err)
	}
	if c.IsSet("qrels") {
		s, err := scoreRuns(c, "compare", args)
		if err != nil {
			return err
		}
		if err := s.Compare(metric); err != nil {
			return usageError{fmt.Errorf("compare: %w", err)}
		}
		return writeScores(c, "compare", s)
	}
	for _, f := range []string{"mteb-task", "ignore-identical-ids", "skip-first-result"} {
		if c.IsSet(f) {
			return usagef("compare: --%s scores TREC runs, which --qrels asks for: msrag eval directories were scored by their own rules", f)
		}
	}
	return compareEvals(c, args, metric)
}

// compareEvals compares msrag eval output directories configuration by
// configuration.
func compareEvals(c *cli.Context, args []string, metric string) error {
	var evals []*report.Eval
	var names, outs []string
	for _, a := range args {
		path := a
		st, err := os.Stat(a)
		switch {
		case err == nil && st.IsDir():
			path = filepath.Join(a, "results.json")
		case err == nil && filepath.Base(a) != "results.json":
			return usagef("compare: %s is not an msrag eval directory or its results.json: to compare TREC run files, give --qrels", a)
		}
		e, err := report.ReadFile(path)
		if err != nil {
			return usageError{err}
		}
		name := filepath.Base(filepath.Dir(path))
		if slices.Contains(names, name) {
			name = filepath.Dir(path)
		}
		evals, names, outs = append(evals, e), append(names, name), append(outs, filepath.Dir(path))
	}
	m, err := report.CompareModes(evals, names, outs, metric)
	if err != nil {
		return usageError{err}
	}
	if p := c.String("json"); p != "" {
		err := writeOutput(c, p, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(m)
		})
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	if err := report.WriteModesMarkdown(c.App.Writer, m); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}
