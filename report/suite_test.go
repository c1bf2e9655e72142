package report_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/report"
)

// suiteRuns is two datasets with one model, a second model on the first, and
// a failed run.
func suiteRuns() []report.SuiteRun {
	other := tinyEval()
	other.Dataset, other.Queries = "other", 7
	other.Config("rrf").Results.Mean["ndcg_cut_10"] = 0.45 // below the best window, w20's 0.5
	second := tinyEval()
	second.Index.Reused = true
	return []report.SuiteRun{
		{Dataset: "tiny", Model: "m", Windows: []int{10, 20}, Dir: "tiny-m-w10-20", Eval: tinyEval()},
		{Dataset: "tiny", Model: "n", Windows: []int{10, 20}, Dir: "tiny-n-w10-20", Eval: second},
		{Dataset: "other", Model: "m", Windows: []int{10, 20}, Dir: "other-m-w10-20", Eval: other},
		{Dataset: "other", Model: "n", Windows: []int{10, 20}, Dir: "other-n-w10-20", Err: "embedder: out of memory | bad"},
	}
}

func TestWriteSuiteMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteSuiteMarkdown(&b, "Suite toy", "Two made-up datasets.", suiteRuns()); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	want := []string{
		"# Suite toy\n\nTwo made-up datasets.\n",
		"| dataset | split | model | windows | queries | best window | its nDCG@10 | full | maxp | rrf | rrf − best window |\n" +
			"|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n" +
			"| tiny | test | m | 10, 20 | 4 | w20 | 50.00 | 30.00 | 45.00 | 55.25 | +5.25 |\n" +
			"| tiny | test | n | 10, 20 | 4 | w20 | 50.00 | 30.00 | 45.00 | 55.25 | +5.25 |\n" +
			"| other | test | m | 10, 20 | 7 | w20 | 50.00 | 30.00 | 45.00 | 45.00 | -5.00 |\n\n",
		// nDCG@10: oracle 60 against w20's 50; cdr@1: oracle 75 against w20's 50 (+50%).
		"| tiny | m | 10, 20 | 50.00 | 60.00 | +10.00 | 50.00 | 50.00 | 75.00 | +25.00 | +50.0% |\n",
		"![cdr@K of every dataset](recall_at_k.png)",
		"| tiny | n | 10, 20 | 9 | reused | 0.00 s | 0.00 s | [tiny-n-w10-20/report.md](tiny-n-w10-20/report.md) |\n",
		"| other | n | 10, 20 | — | — | — | — | failed: embedder: out of memory / bad |\n",
	}
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("summary lacks\n%s\nsummary:\n%s", w, md)
		}
	}
}

func TestWriteSuitePlots(t *testing.T) {
	dir := t.TempDir()
	paths, err := report.WriteSuitePlots(dir, suiteRuns())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || filepath.Base(paths[0]) != "recall_at_k.png" || filepath.Base(paths[1]) != "recall_at_k.svg" {
		t.Fatalf("wrote %v", paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// Two panels (models m and n) side by side.
	if b := img.Bounds(); b.Dx() < 2*b.Dy() {
		t.Errorf("figure %v is not two panels wide", b)
	}
	svg, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	checkSVG(t, "recall_at_k.svg", svg)
	for _, w := range []string{"cdr@K, m (10, 20)", "cdr@K, n (10, 20)", "tiny rrf", "tiny w20", "other rrf"} {
		if !bytes.Contains(svg, []byte(w)) {
			t.Errorf("recall_at_k.svg does not mention %q", w)
		}
	}
	if _, err := report.WriteSuitePlots(dir, suiteRuns()[3:]); err == nil {
		t.Errorf("a suite without results: no error")
	}
}
