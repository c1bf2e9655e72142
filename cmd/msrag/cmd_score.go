package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/mteb"
	"github.com/msrag/msrag/report"
)

func init() {
	register(&cli.Command{
		Name:      "score",
		Usage:     "score TREC runs from any system against qrels with MTEB's metrics and per-task rules",
		ArgsUsage: "RUN [RUN...]",
		Description: "Each RUN is a TREC run file (qid Q0 docid rank score tag), from msrag or any other system\n" +
			"(trec_eval, ranx, pyserini). Prints the tables msrag eval prints: nDCG, MAP and MRR at 10,\n" +
			"recall at 10, 100 and 1000, and correct-document recall at 1, 2, 3, 5 and 10, computed as\n" +
			"pytrec_eval computes them (ties broken by document id; queries the run ranks nothing for are\n" +
			"not scored). --mteb-task applies the task's MTEB scoring rules (ArguAna drops a retrieved\n" +
			"document whose id is the query's); --ignore-identical-ids and --skip-first-result force them.\n" +
			"msrag compare --qrels QRELS RUN RUN... adds paired comparisons with the first run.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "qrels", Required: true, Usage: "judgements: BEIR TSV (query-id corpus-id score), TREC qrels or Parquet"},
			&cli.StringFlag{Name: "json", Usage: "also write the scores, per query too, as JSON to this file"},
		}, scoringFlags()...),
		Action: scoreAction,
	})
}

// scoringFlags choose MTEB's per-task rules, as msrag eval's do.
func scoringFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mteb-task", Usage: "the MTEB task whose scoring rules apply (ArguAna: ignore_identical_ids; default none)"},
		&cli.BoolFlag{Name: "ignore-identical-ids", Usage: "=true|false: drop (or keep) each retrieved document whose id is the query's, whatever the task says"},
		&cli.BoolFlag{Name: "skip-first-result", Usage: "=true|false: drop (or keep) each query's first result, whatever the task says"},
	}
}

// scoring maps --mteb-task and the rules' flags to the rules runs are
// scored with.
func scoring(c *cli.Context, cmd string) (report.Scoring, error) {
	sc := report.Scoring{Source: "none"}
	if name := c.String("mteb-task"); c.IsSet("mteb-task") {
		t, respelled, err := mteb.Lookup(name)
		if err != nil {
			return sc, usagef("%s: --mteb-task: %w", cmd, err)
		}
		if respelled {
			fmt.Fprintf(c.App.ErrWriter, "%s: --mteb-task %s is mteb's %s\n", cmd, name, t.Name)
		}
		sc.Rules, sc.Source = t.Rules, fmt.Sprintf("mteb %s task %s", mteb.Version, t.Name)
	}
	if c.IsSet("ignore-identical-ids") || c.IsSet("skip-first-result") {
		sc.Source = "given, over " + sc.Source
		if c.IsSet("ignore-identical-ids") {
			sc.IgnoreIdenticalIDs = c.Bool("ignore-identical-ids")
		}
		if c.IsSet("skip-first-result") {
			sc.SkipFirstResult = c.Bool("skip-first-result")
		}
	}
	return sc, nil
}

func scoreAction(c *cli.Context) error {
	s, err := scoreRuns(c, "score", c.Args().Slice())
	if err != nil {
		return err
	}
	return writeScores(c, "score", s)
}

// scoreRuns reads --qrels and the run files and scores them.
func scoreRuns(c *cli.Context, cmd string, paths []string) (*report.Scores, error) {
	if len(paths) == 0 {
		return nil, usagef("%s: give one or more TREC run files", cmd)
	}
	sc, err := scoring(c, cmd)
	if err != nil {
		return nil, err
	}
	rows, err := corpus.ReadQrels(c.String("qrels"), corpus.Options{})
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: --qrels: %w", cmd, err)}
	}
	runs := make([]eval.Run, len(paths))
	for i, p := range paths {
		if runs[i], err = eval.ReadRunFile(p); err != nil {
			return nil, usageError{fmt.Errorf("%s: %w", cmd, err)}
		}
	}
	s, err := report.ScoreRuns(eval.Qrels(corpus.Judgements(rows)), sc, runNames(paths), paths, runs)
	if err != nil {
		return nil, err
	}
	s.Qrels = c.String("qrels")
	return s, nil
}

// runNames names run files by their base names without the extension, by
// their paths where two share one.
func runNames(paths []string) []string {
	names := make([]string, len(paths))
	count := map[string]int{}
	for i, p := range paths {
		names[i] = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		count[names[i]]++
	}
	for i := range names {
		if count[names[i]] > 1 {
			names[i] = paths[i]
		}
	}
	return names
}

// writeScores prints the tables and writes --json.
func writeScores(c *cli.Context, cmd string, s *report.Scores) error {
	if p := c.String("json"); p != "" {
		err := writeOutput(c, p, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(s)
		})
		if err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
	}
	return report.WriteScores(c.App.Writer, s)
}
