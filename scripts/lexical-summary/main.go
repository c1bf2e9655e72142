// Command lexical-summary writes docs/results.md's tables of dense, lexical
// and hybrid retrieval from msrag eval runs (scripts/lexical-results.sh):
// per run, nDCG@10 of each kind's best single channel (after the fact), each
// kind's RRF, the default hybrid, the learned hybrid and the oracles, then
// the paired comparisons that say whether the hybrid is better.
//
//	go run ./scripts/lexical-summary HYBRID LABEL=RESULTS[=FUSION]...
//
// HYBRID is the default hybrid's configuration name (fusion.DefaultHybrid);
// LABEL names a run's row ("SciFact test, all-MiniLM-L6-v2 int8"); RESULTS is
// its results.json; FUSION the fusion.json msrag tune wrote on the training
// split. The learned hybrid is what tune chose on the training split: the
// rule with its router when the router's cross-validated nDCG@10 beat the
// rule's alone (choice.router.beats_none), else the rule: "learned" or
// "learned+router", or for a cross-validated run "learned-cv" or
// "learned+router-cv" by the choice in FUSION (another split's, e.g. QMSum
// train's for LongEmbed QMSum).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/report"
)

const metric = "ndcg_cut_10"

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: lexical-summary HYBRID LABEL=RESULTS...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "lexical-summary:", err)
		os.Exit(1)
	}
}

type row struct {
	label  string
	e      *report.Eval
	router bool // the training split's choice: the rule with its router
}

func run(hybrid string, args []string) error {
	var rows []row
	for _, a := range args {
		parts := strings.Split(a, "=")
		if len(parts) < 2 || len(parts) > 3 {
			return fmt.Errorf("%q: want LABEL=RESULTS[=FUSION]", a)
		}
		e, err := report.ReadFile(parts[1])
		if err != nil {
			return err
		}
		r := row{label: parts[0], e: e}
		if len(parts) == 3 {
			if r.router, err = routerChosen(parts[2]); err != nil {
				return err
			}
		}
		rows = append(rows, r)
	}
	fmt.Println("| run | full | dense: best window | dense: rrf | lexical: best channel | lexical: rrf | hybrid: `" + hybrid + "` | hybrid: learned | oracle: dense | oracle: lexical | oracle: all |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		if err := means(r, hybrid); err != nil {
			return err
		}
	}
	fmt.Println()
	fmt.Println("| run | hybrid − better of dense and lexical rrf | hybrid − dense rrf | hybrid − lexical rrf | learned − hybrid |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, r := range rows {
		if err := pairs(r, hybrid); err != nil {
			return err
		}
	}
	return nil
}

// routerChosen reads whether tune chose the router on its training split.
func routerChosen(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var m struct {
		Choice struct {
			Router *struct {
				BeatsNone bool `json:"beats_none"`
			} `json:"router"`
		} `json:"choice"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return m.Choice.Router != nil && m.Choice.Router.BeatsNone, nil
}

// learned is the learned hybrid the training split chose.
func learned(r row) *report.Config {
	name := "learned"
	if r.router {
		name = "learned+router"
	}
	if c := r.e.Config(name); c != nil {
		return c
	}
	return r.e.Config(name + "-cv")
}

func cell(c *report.Config) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f", 100*c.Results.Mean[metric])
}

func best(e *report.Eval, channels string) *report.Config {
	var b *report.Config
	for i := range e.Configs {
		c := &e.Configs[i]
		if c.Kind == report.KindWindow && c.Channels == channels && (b == nil || c.Results.Mean[metric] > b.Results.Mean[metric]) {
			b = c
		}
	}
	return b
}

func means(r row, hybrid string) error {
	e := r.e
	h := e.Config(hybrid)
	if h == nil {
		return fmt.Errorf("%s: no configuration %s", r.label, hybrid)
	}
	bd, bl := best(e, report.ChannelsDense), best(e, report.ChannelsLexical)
	lc, ln := learned(r), ""
	if lc != nil {
		ln = " (" + lc.Name + ")"
	}
	fmt.Printf("| %s | %s | %s (%s) | %s | %s (%s) | %s | %s | %s%s | %s | %s | %s |\n", r.label, cell(e.Config("full")),
		cell(bd), bd.Name, cell(e.Config("rrf")), cell(bl), bl.Name, cell(e.Config(report.LexicalRRF)),
		cell(h), cell(lc), ln, cell(e.Config("oracle:dense")), cell(e.Config("oracle:lexical")), cell(e.Config("oracle")))
	return nil
}

func paired(a, b *report.Config) (string, error) {
	if a == nil || b == nil {
		return "—", nil
	}
	p, err := eval.Compare(a.Results, b.Results, metric)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%+.2f [%+.2f, %+.2f] %d/%d/%d", 100*p.Diff, 100*p.Lo, 100*p.Hi, p.Wins, p.Ties, p.Losses), nil
}

func pairs(r row, hybrid string) error {
	e := r.e
	h, dense, lex := e.Config(hybrid), e.Config("rrf"), e.Config(report.LexicalRRF)
	better := dense
	if lex.Results.Mean[metric] > dense.Results.Mean[metric] {
		better = lex
	}
	var cells []string
	for _, p := range [][2]*report.Config{{h, better}, {h, dense}, {h, lex}, {learned(r), h}} {
		s, err := paired(p[0], p[1])
		if err != nil {
			return fmt.Errorf("%s: %w", r.label, err)
		}
		cells = append(cells, s)
	}
	cells[0] += " (vs " + better.Name + ")"
	fmt.Printf("| %s | %s |\n", r.label, strings.Join(cells, " | "))
	return nil
}
