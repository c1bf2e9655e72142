package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/report"
)

func init() {
	register(&cli.Command{
		Name:      "compare",
		Usage:     "compare evaluation runs of one dataset, split and model, configuration by configuration",
		ArgsUsage: "RUN RUN [RUN...]",
		Description: "Each RUN is an output directory of msrag eval (or its results.json). Every configuration\n" +
			"the runs share is shown in each, with its paired difference from the first run over the same\n" +
			"queries (nDCG@10), a 95% bootstrap interval and the queries won, tied and lost: for runs that\n" +
			"differ in how they were built (the embedding, late chunking's edges, an index factory).\n" +
			"Runs are named by their directories.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "json", Usage: "also write the comparison as JSON to this file"},
		},
		Action: compareAction,
	})
}

func compareAction(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) < 2 {
		return usagef("compare: give two runs or more (msrag eval output directories)")
	}
	var evals []*report.Eval
	var names, outs []string
	for _, a := range args {
		path := a
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			path = filepath.Join(a, "results.json")
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
	m, err := report.CompareModes(evals, names, outs, experiment.PairedMetric)
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
