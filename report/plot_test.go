package report_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/msrag/msrag/report"
)

// plotEval is tinyEval with the default hybrid and the transferred fusion.
func plotEval() *report.Eval {
	e := tinyEval()
	e.DefaultHybrid = "combsum:norm=zscore,windows=all"
	e.Configs = append(e.Configs,
		report.Config{Name: e.DefaultHybrid, Kind: "combsum", Results: results(4, map[string]float64{
			"ndcg_cut_10": 0.58, "cdr_1": 0.5, "cdr_2": 0.75, "cdr_3": 1, "cdr_5": 1, "cdr_10": 1})},
		report.Config{Name: "transfer", Kind: report.KindLearned, Results: results(4, map[string]float64{
			"ndcg_cut_10": 0.56, "cdr_1": 0.5, "cdr_2": 0.5, "cdr_3": 0.75, "cdr_5": 1, "cdr_10": 1})})
	return e
}

// svgText matches a text element of gonum's SVG: its x and its text.
var svgText = regexp.MustCompile(`<text x="([-0-9.]+)"[^>]*>([^<]*)</text>`)

// TestRecallPlotLegendBeside checks that the recall curves draw the default
// hybrid (named so) and the transferred fusion, and that every legend entry
// lies to the right of the plotting area: right of the x axis's last tick
// label, K=10.
func TestRecallPlotLegendBeside(t *testing.T) {
	dir := t.TempDir()
	if _, err := report.WritePlots(dir, plotEval()); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "recall_at_k.svg"))
	if err != nil {
		t.Fatal(err)
	}
	xs := map[string]float64{}
	for _, m := range svgText.FindAllStringSubmatch(string(svg), -1) {
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("text %q at x %q", m[2], m[1])
		}
		xs[m[2]] = x
	}
	axisEnd, ok := xs["10"]
	if !ok {
		t.Fatalf("no tick label 10 in recall_at_k.svg; texts: %v", xs)
	}
	for _, label := range []string{"w10", "w20", "rrf", "oracle (upper bound)",
		"combsum:norm=zscore,windows=all (default hybrid)", "transfer"} {
		x, ok := xs[label]
		if !ok {
			t.Errorf("recall_at_k.svg has no legend entry %q; texts: %v", label, xs)
			continue
		}
		if x <= axisEnd {
			t.Errorf("legend entry %q at x %.1f: inside the plotting area (its last tick label is at x %.1f)", label, x, axisEnd)
		}
	}
}
