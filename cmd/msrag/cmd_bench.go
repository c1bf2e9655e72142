package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/suite"
)

func init() {
	register(&cli.Command{
		Name:  "bench",
		Usage: "run a benchmark suite: datasets x models x window sets x configurations, one summary",
		Description: "Reads the suite file (--suite; docs/suites.md has the schema, suites/seed.json and\n" +
			"suites/quick.json are examples; relative paths in it are relative to the file) and runs every\n" +
			"dataset with every model and window set, as msrag eval does, each into OUT/DATASET-MODEL-wA-B-C\n" +
			"(report.md, results.json, plots, runs, MTEB result files). Everything is checked first: a dataset\n" +
			"that does not open, a model that is not fetched (with the command that fetches it), a window set\n" +
			"the model cannot take; all are listed and nothing runs. Indices go to INDICES/CORPUS-MODEL-wA-B-C\n" +
			"(default OUT/indices) and are reused when they match, so running a suite again costs the queries\n" +
			"only. Each model is opened once for its runs; a failed run is reported and the others go on.\n\n" +
			"Writes into OUT: summary.md (nDCG@10 of the best single window against RRF per dataset and\n" +
			"model, the oracle's headroom, the runs with links to their reports), summary.json,\n" +
			"recall_at_k.{png,svg} (cdr@K of every dataset, one panel per model and window set) and\n" +
			"mteb/results/... (every run's MTEB result files together), and prints summary.md.\n" +
			"--check checks the suite and prints its plan without running anything.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "suite", Required: true, Usage: "suite file (JSON)"},
			&cli.StringFlag{Name: "out", Usage: "output directory (default: the suite's \"out\")"},
			&cli.StringFlag{Name: "indices", Usage: "directory of the indices (default: the suite's \"indices\", else OUT/indices)"},
			&cli.BoolFlag{Name: "check", Usage: "check the suite, its datasets and models, print the plan, run nothing"},
			&cli.IntFlag{Name: "workers", Usage: "tokenizer goroutines when building (0: all cores)"},
			&cli.BoolFlag{Name: "rebuild", Usage: "build every index even when one matches"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for another build of an index instead of failing"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
		}, append(deviceFlags(), remoteModelFlags()...)...),
		Action: benchAction,
	})
}

// benchSuite loads the suite file and applies the flags.
func benchSuite(c *cli.Context) (suite.Suite, error) {
	if c.NArg() != 0 {
		return suite.Suite{}, usagef("bench: unexpected arguments %v", c.Args().Slice())
	}
	s, err := suite.Load(c.String("suite"))
	if err != nil {
		return s, benchError(err)
	}
	// Flags are relative to the working directory, the file's paths to its directory.
	for _, f := range []struct {
		flag string
		dst  *string
	}{{"out", &s.Out}, {"indices", &s.Indices}} {
		if c.IsSet(f.flag) && strings.TrimSpace(c.String(f.flag)) == "" {
			return s, usagef("bench: --%s is empty: name a directory", f.flag)
		}
		if v := c.String(f.flag); v != "" {
			if *f.dst, err = relativeTo(s.Dir, v); err != nil {
				return s, usagef("bench: --%s %s: %w", f.flag, v, err)
			}
		}
	}
	if s.Embedder, err = embedderOptions(c); err != nil {
		return s, err
	}
	if err := s.Embedder.Check(); err != nil { // idle whatever the suite's models
		return s, deviceUsage("bench", "", err)
	}
	if err := benchDevice(s); err != nil {
		return s, err
	}
	served := slices.ContainsFunc(s.Models, func(m suite.Model) bool { return servedName(m.Name) })
	if err := checkServerFlags(c, "bench", served, "no model of the suite is behind a server"); err != nil {
		return s, err
	}
	if err := checkWorkers(c, "bench"); err != nil {
		return s, err
	}
	s.Rebuild, s.Wait, s.Workers = c.Bool("rebuild"), c.Bool("wait"), c.Int("workers")
	if !c.Bool("quiet") {
		s.Log = c.App.ErrWriter
		s.Progress = func(run string) (func(msrag.Progress), func()) {
			bar := newProgressBar(c.App.ErrWriter, "index "+run)
			return bar.callback(), bar.finish
		}
	}
	return s, nil
}

// benchDevice refuses a device for a suite none of whose models runs on one
// (servers' models, the hash test embedder): each is opened without it
// (suite.OpenModel), and a suite searches its FAISS indices on the CPU, so
// the device would do nothing.
func benchDevice(s suite.Suite) error {
	field, value := s.Embedder.ChoosesDevice()
	if field == "" || slices.ContainsFunc(s.Models, func(m suite.Model) bool { return embed.Devices(embed.Origin{}, m.Name) }) {
		return nil
	}
	var names []string
	for _, m := range s.Models {
		names = append(names, remote.Redact(m.Name))
	}
	return usagef("bench: %s %s: no model of the suite runs on a device (%s), and bench searches its FAISS indices on the CPU: the option would do nothing",
		deviceFlagNames[field], value, strings.Join(names, ", "))
}

// relativeTo returns path, given relative to the working directory, as a
// path relative to dir (absolute paths stay as they are).
func relativeTo(dir, path string) (string, error) {
	if filepath.IsAbs(path) || dir == "" {
		return path, nil
	}
	if filepath.IsAbs(dir) {
		return filepath.Abs(path)
	}
	return filepath.Rel(dir, path)
}

func benchAction(c *cli.Context) error {
	s, err := benchSuite(c)
	if err != nil {
		return err
	}
	if c.Bool("check") {
		p, err := suite.Check(c.Context, s)
		if p != nil {
			printPlan(c.App.Writer, p)
		}
		return benchError(err)
	}
	sum, err := suite.Run(c.Context, s)
	if sum != nil && sum.Files.Report != "" {
		if werr := sum.WriteMarkdown(c.App.Writer); werr != nil && err == nil {
			err = werr
		}
		fmt.Fprintf(c.App.ErrWriter, "bench: wrote %s, %s, %s and %d MTEB result files under %s (%.0f s)\n",
			sum.Files.Report, sum.Files.Summary, strings.Join(sum.Files.Plots, ", "), len(sum.Files.MTEB),
			filepath.Join(sum.Out, "mteb"), sum.Seconds)
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(c.App.ErrWriter, "bench: interrupted: kept the %d finished runs; the run under way is marked interrupted in %s\n",
				sum.Finished(), sum.Files.Summary)
		}
	}
	return benchError(err)
}

// benchError marks what is wrong with the suite file itself as a usage
// error; a missing model or dataset and failed runs are failures.
func benchError(err error) error {
	if errors.Is(err, suite.ErrInvalid) {
		return usageError{err}
	}
	return asUsage(err)
}

// printPlan prints the runs of a plan.
func printPlan(w io.Writer, p *suite.Plan) {
	fmt.Fprintf(w, "%d runs into %s, indices in %s\n\n", len(p.Runs), p.Out, p.Indices)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tDATASET\tSPLIT\tMTEB TASK\tMODEL\tWINDOWS\tCONFIGURATIONS\tINDEX")
	for _, r := range p.Runs {
		var configs []string
		for _, cf := range r.Configs {
			configs = append(configs, cf.Name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Dataset.Dir, r.Dataset.Split, r.MTEB.Task, r.Model,
			fmtInts(r.Windows), strings.Join(configs, ","), r.Index)
	}
	tw.Flush()
}
