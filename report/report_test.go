package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/report"
)

// results makes an eval.Results with the given means (per-query values are
// not used by the report's tables).
func results(n int, means map[string]float64) eval.Results {
	r := eval.Results{NumQueries: n, Mean: means}
	for m := range means {
		r.Metrics = append(r.Metrics, m)
	}
	return r
}

// tinyEval is a made-up run: two windows, rrf, maxp, full and the oracle, with
// round numbers so that the tables can be checked by hand.
func tinyEval() *report.Eval {
	return &report.Eval{
		Dataset: "tiny", Split: "test", Model: report.Model{Name: "m", Dims: 4, MaxTokens: 64},
		Windows: []int{10, 20}, FullWindow: 62, K: 100, ChannelK: 50, Queries: 4, Docs: 9,
		Configs: []report.Config{
			{Name: "w10", Kind: report.KindWindow, Windows: []int{10}, Results: results(4, map[string]float64{
				"ndcg_cut_10": 0.4, "cdr_1": 0.25, "cdr_2": 0.5, "cdr_3": 0.5, "cdr_5": 0.75, "cdr_10": 0.75})},
			{Name: "w20", Kind: report.KindWindow, Windows: []int{20}, Results: results(4, map[string]float64{
				"ndcg_cut_10": 0.5, "cdr_1": 0.5, "cdr_2": 0.5, "cdr_3": 0.75, "cdr_5": 0.75, "cdr_10": 1})},
			{Name: "rrf", Kind: "rrf", Windows: []int{10, 20}, Results: results(4, map[string]float64{
				"ndcg_cut_10": 0.5525, "cdr_1": 0.5, "cdr_2": 0.75, "cdr_3": 0.75, "cdr_5": 1, "cdr_10": 1})},
			{Name: "maxp", Kind: "maxp", Windows: []int{10, 20}, Results: results(4, map[string]float64{
				"ndcg_cut_10": 0.45, "cdr_1": 0.25, "cdr_2": 0.5, "cdr_3": 0.5, "cdr_5": 1, "cdr_10": 1})},
			{Name: "full", Kind: report.KindFull, Results: results(4, map[string]float64{
				"ndcg_cut_10": 0.3, "cdr_1": 0, "cdr_2": 0.25, "cdr_3": 0.25, "cdr_5": 0.5, "cdr_10": 0.75})},
			{Name: "oracle", Kind: report.KindOracle, UpperBound: true, Results: results(4, map[string]float64{
				"ndcg_cut_10": 0.6, "cdr_1": 0.75, "cdr_2": 0.75, "cdr_3": 0.75, "cdr_5": 1, "cdr_10": 1})},
		},
		Oracle: &report.Oracle{
			Over: []string{"w10", "w20"}, HistogramMetric: "ndcg_cut_10",
			BestCounts: map[string][]int{"ndcg_cut_10": {3, 1}, "cdr_1": {2, 2}},
			Ties:       map[string]int{"ndcg_cut_10": 1, "cdr_1": 2},
		},
	}
}

func TestWriteMarkdownTables(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteMarkdown(&b, tinyEval()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// Hand-computed: the best window by nDCG@10 is w20 (0.5 > 0.4); rrf
	// 0.5525 is 55.25, +5.25 points over it; full is 30.00.
	want := []string{
		"| dataset | queries | channels | best single channel | nDCG@10 best | nDCG@10 full | rrf | nDCG@10 rrf | rrf − best |\n" +
			"|---|---:|---|---|---:|---:|---|---:|---:|\n" +
			"| tiny | 4 | dense | w20 | 50.00 | 30.00 | rrf | 55.25 | +5.25 |\n\n",
		"| configuration | cdr@1 | cdr@2 | cdr@3 | cdr@5 | cdr@10 |\n" +
			"|---|---:|---:|---:|---:|---:|\n" +
			"| w10 | 25.00 | 50.00 | 50.00 | 75.00 | 75.00 |\n" +
			"| w20 | 50.00 | 50.00 | 75.00 | 75.00 | 100.00 |\n" +
			"| rrf | 50.00 | 75.00 | 75.00 | 100.00 | 100.00 |\n" +
			"| maxp | 25.00 | 50.00 | 50.00 | 100.00 | 100.00 |\n" +
			"| full | 0.00 | 25.00 | 25.00 | 50.00 | 75.00 |\n" +
			"| oracle (upper bound) | 75.00 | 75.00 | 75.00 | 100.00 | 100.00 |\n",
		// cdr@1: oracle 0.75 against the best window w20 0.5: +50% relative.
		"The oracle's cdr@1 is 75.00, +50.0% relative to the best single window (w20, 50.00).",
		// BestCounts 3, 1 with 1 tie: w10 is strictly best for 2 queries.
		"| window | queries |\n|---|---:|\n| w10 | 2 |\n| w20 | 1 |\n| all equal | 1 |\n",
		"## Best window per query (nDCG@10)",
		"run with --k 1000",
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("report.md lacks\n%s\nreport.md:\n%s", w, md)
		}
	}
}

func TestWriteSummaryWithoutRRFOrFull(t *testing.T) {
	e := tinyEval()
	e.Configs = e.Configs[:2] // windows only
	e.Oracle = nil
	var b bytes.Buffer
	if err := report.WriteSummary(&b, e); err != nil {
		t.Fatal(err)
	}
	want := "| tiny | 4 | dense | w20 | 50.00 | — | — | — | — |\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "non-semantic") {
		t.Errorf("summary of model %q warns of the test embedder:\n%s", e.Model.Name, b.String())
	}
	e.Model.Name = "hash-test-embedder"
	b.Reset()
	if err := report.WriteSummary(&b, e); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "non-semantic test embedder") {
		t.Errorf("summary of the hash test embedder does not warn:\n%s", b.String())
	}
}

func TestWritePlots(t *testing.T) {
	dir := t.TempDir()
	paths, err := report.WritePlots(dir, tinyEval())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	wantNames := []string{"recall_at_k.png", "recall_at_k.svg", "oracle_best_window.png", "oracle_best_window.svg"}
	if strings.Join(names, ",") != strings.Join(wantNames, ",") {
		t.Fatalf("wrote %v, want %v", names, wantNames)
	}
	for _, name := range wantNames {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path); err != nil {
			t.Fatal(err)
		} else if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644 as every other output", name, fi.Mode().Perm())
		}
		switch filepath.Ext(name) {
		case ".png":
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s: not a PNG: %v", name, err)
			}
			if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
				t.Errorf("%s: %v is too small", name, b)
			}
		case ".svg":
			checkSVG(t, name, data)
		}
	}
	// The legend names every plotted configuration, the oracle as an upper bound.
	svg, _ := os.ReadFile(filepath.Join(dir, "recall_at_k.svg"))
	for _, w := range []string{"w10", "w20", "rrf", "oracle (upper bound)"} {
		if !bytes.Contains(svg, []byte(w)) {
			t.Errorf("recall_at_k.svg does not mention %q", w)
		}
	}
	if bytes.Contains(svg, []byte(">maxp<")) {
		t.Errorf("recall_at_k.svg plots maxp; it should plot windows, rrf and the oracle only")
	}
}

// checkSVG fails unless data is well-formed XML whose root element is svg.
func checkSVG(t *testing.T, name string, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not well-formed XML: %v", name, err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", name, root)
	}
}

func TestWritePlotsNeedsCDR(t *testing.T) {
	e := tinyEval()
	for i := range e.Configs {
		e.Configs[i].Results = results(4, map[string]float64{"ndcg_cut_10": 0.5})
	}
	e.Oracle = nil
	if _, err := report.WritePlots(t.TempDir(), e); err == nil || !strings.HasPrefix(err.Error(), "report: ") {
		t.Fatalf("plots without cdr values: err %v, want a report: error", err)
	}
}

// TestWritePlotsRulesOnly checks that a run of fusion rules alone, without
// single windows, rrf or the oracle, still draws its recall curves.
func TestWritePlotsRulesOnly(t *testing.T) {
	e := tinyEval()
	e.Configs = []report.Config{e.Configs[3]} // maxp
	e.Oracle = nil
	paths, err := report.WritePlots(t.TempDir(), e)
	if err != nil || len(paths) != 2 {
		t.Fatalf("plots of maxp alone: %v, %v; want the recall curves", paths, err)
	}
}

func TestOraclePicksRejectsTooManyTies(t *testing.T) {
	o := &report.Oracle{Over: []string{"w10", "w20"}, BestCounts: map[string][]int{"cdr_1": {1, 3}}, Ties: map[string]int{"cdr_1": 2}}
	if _, _, err := o.Picks("cdr_1"); err == nil {
		t.Fatal("2 ties with the first window best for 1 query: no error")
	}
	if _, _, err := o.Picks("ndcg_cut_10"); err == nil {
		t.Fatal("a metric without counts: no error")
	}
	counts, ties, err := (&report.Oracle{Over: []string{"a", "b"}, BestCounts: map[string][]int{"m": {5, 3}}, Ties: map[string]int{"m": 4}}).Picks("m")
	if err != nil || ties != 4 || counts[0] != 1 || counts[1] != 3 {
		t.Fatalf("Picks: %v, %d, %v; want [1 3], 4, nil", counts, ties, err)
	}
}

// TestWriteKinds checks the section that sets dense, lexical and hybrid side
// by side, on a made-up run with hand-checkable numbers.
func TestWriteKinds(t *testing.T) {
	e := tinyEval()
	ndcg := func(v float64) eval.Results { return results(4, map[string]float64{"ndcg_cut_10": v}) }
	for i := range e.Configs {
		e.Configs[i].Channels = report.ChannelsDense
	}
	e.Configs[5].Channels = report.ChannelsHybrid // the oracle over every channel
	e.Configs = append(e.Configs,
		report.Config{Name: "bm25-w10", Kind: report.KindWindow, Channels: report.ChannelsLexical, Results: ndcg(0.45)},
		report.Config{Name: "bm25-doc", Kind: report.KindWindow, Channels: report.ChannelsLexical, Results: ndcg(0.55)},
		report.Config{Name: report.LexicalRRF, Kind: "rrf", Channels: report.ChannelsLexical, Results: ndcg(0.5),
			Paired: map[string]eval.Paired{report.PairedRRF: {Diff: -0.0525, Lo: -0.1, Hi: 0.01, Wins: 1, Ties: 1, Losses: 2}}},
		report.Config{Name: "rrf:windows=all", Kind: "rrf", Channels: report.ChannelsHybrid, Results: ndcg(0.6),
			Paired: map[string]eval.Paired{report.PairedRRF: {Diff: 0.0475, Lo: 0.01, Hi: 0.09, Wins: 2, Ties: 2},
				report.PairedLexicalRRF: {Diff: 0.1, Lo: 0.02, Hi: 0.2, Wins: 3, Ties: 1}}},
		report.Config{Name: "oracle:dense", Kind: report.KindOracle, UpperBound: true, Channels: report.ChannelsDense, Results: ndcg(0.58)},
		report.Config{Name: "oracle:lexical", Kind: report.KindOracle, UpperBound: true, Channels: report.ChannelsLexical, Results: ndcg(0.62)},
	)
	e.Configs[5].Results = ndcg(0.7)
	var md, sum bytes.Buffer
	if err := report.WriteMarkdown(&md, e); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteSummary(&sum, e); err != nil {
		t.Fatal(err)
	}
	kinds := "| channels | best single channel | rrf | oracle (upper bound) |\n|---|---:|---:|---:|\n" +
		"| dense | 50.00 (w20) | 55.25 (rrf) | 58.00 |\n" +
		"| lexical | 55.00 (bm25-doc) | 50.00 (rrf:windows=lexical) | 62.00 |\n" +
		"| hybrid | 55.00 (bm25-doc) | 60.00 (rrf:windows=all) | 70.00 |\n"
	// Naive vs RRF kind by kind: the dense rrf (55.25) against the best dense
	// window w20 (50.00), not against bm25-doc (55.00, the best channel of
	// any kind, which made +0.25); the lexical RRF (50.00) against bm25-doc;
	// RRF over both (60.00) against bm25-doc, the best of either kind.
	naive := "| tiny | 4 | dense | w20 | 50.00 | 30.00 | rrf | 55.25 | +5.25 |\n" +
		"| tiny | 4 | lexical | bm25-doc | 55.00 | — | rrf:windows=lexical | 50.00 | -5.00 |\n" +
		"| tiny | 4 | hybrid, against the best single channel of either kind | bm25-doc | 55.00 | — | rrf:windows=all | 60.00 | +5.00 |\n"
	if !strings.Contains(sum.String(), naive) {
		t.Errorf("the summary lacks the naive table kind by kind:\n%s\nsummary:\n%s", naive, sum.String())
	}
	for _, w := range []string{kinds, naive, "## Dense, lexical and hybrid (nDCG@10)",
		"| rrf:windows=lexical | lexical | 50.00 | -5.25 | [-10.00, +1.00] | 1/1/2 | — | — | — |\n",
		"| rrf:windows=all | hybrid | 60.00 | +4.75 | [+1.00, +9.00] | 2/2/0 | +10.00 | [+2.00, +20.00] | 3/1/0 |\n"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("report.md lacks\n%s\nreport.md:\n%s", w, md.String())
		}
	}
	if !strings.Contains(sum.String(), kinds) {
		t.Errorf("the summary lacks the kinds table:\n%s", sum.String())
	}
	// A default hybrid other than RRF over every channel gets its column.
	e.Configs = append(e.Configs, report.Config{Name: "combsum:windows=all", Kind: "combsum", Channels: report.ChannelsHybrid, Results: ndcg(0.61)})
	e.DefaultHybrid = "combsum:windows=all"
	md.Reset()
	if err := report.WriteMarkdown(&md, e); err != nil {
		t.Fatal(err)
	}
	if w := "| dense | 50.00 (w20) | 55.25 (rrf) | 58.00 | — |\n| lexical | 55.00 (bm25-doc) | 50.00 (rrf:windows=lexical) | 62.00 | — |\n" +
		"| hybrid | 55.00 (bm25-doc) | 60.00 (rrf:windows=all) | 70.00 | 61.00 (combsum:windows=all) |\n"; !strings.Contains(md.String(), w) {
		t.Errorf("report.md lacks\n%s\nreport.md:\n%s", w, md.String())
	}
	var plain bytes.Buffer
	report.WriteMarkdown(&plain, tinyEval())
	if strings.Contains(plain.String(), "Dense, lexical and hybrid") {
		t.Errorf("a run without lexical channels has the kinds section")
	}
}
