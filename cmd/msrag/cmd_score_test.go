package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/report"
)

// compareSet is eval/testdata/compare/SET: judgements and TREC runs with
// golden values of ranx, pytrec_eval and statsmodels
// (scripts/gen_compare_golden.py).
func compareSet(t *testing.T, set string) (dir string, golden struct {
	Runs    []string `json:"runs"`
	Metrics map[string]map[string]struct {
		Mean float64 `json:"mean"`
	} `json:"metrics"`
	Compare map[string]struct {
		PT     float64 `json:"p_t"`
		PTHolm float64 `json:"p_t_holm"`
	} `json:"compare"`
}) {
	t.Helper()
	root := filepath.Join("..", "..", "eval", "testdata", "compare")
	b, err := os.ReadFile(filepath.Join(root, set+".golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, set), golden
}

// TestScoreAndCompareTRECRuns: msrag score and msrag compare --qrels take
// TREC runs from any directory and print what ranx and pytrec_eval compute:
// each run's nDCG@10, the t-test's p-values with Holm's adjustment.
func TestScoreAndCompareTRECRuns(t *testing.T) {
	for _, set := range []string{"small", "sf40"} {
		t.Run(set, func(t *testing.T) {
			dir, g := compareSet(t, set)
			var paths []string
			for _, r := range g.Runs {
				paths = append(paths, filepath.Join(dir, r+".trec"))
			}
			jsonOut := filepath.Join(t.TempDir(), "scores.json")
			code, stdout, stderr := runCLI(t, "", append([]string{"compare", "--qrels", filepath.Join(dir, "qrels.tsv"), "--json", jsonOut}, paths...)...)
			if code != exitOK {
				t.Fatalf("compare: code %d\n%s", code, stderr)
			}
			for i, r := range g.Runs {
				ndcg := fmt.Sprintf("%.2f", 100*g.Metrics[r]["ndcg_cut_10"].Mean)
				if !strings.Contains(stdout, "| "+r+" | ") || !strings.Contains(stdout, " "+ndcg+" ") {
					t.Errorf("run %s: nDCG@10 %s (pytrec_eval) not in:\n%s", r, ndcg, stdout)
				}
				if i == 0 {
					continue
				}
				if p := fmt.Sprintf("| %.4g (%.4g) |", g.Compare[r].PTHolm, g.Compare[r].PT); !strings.Contains(stdout, p) {
					t.Errorf("run %s: t-test p-values %s (statsmodels' Holm, scipy) not in:\n%s", r, p, stdout)
				}
			}
			var s report.Scores
			if b, err := os.ReadFile(jsonOut); err != nil || json.Unmarshal(b, &s) != nil || len(s.Paired) != len(g.Runs)-1 {
				t.Errorf("--json: %d comparisons (%v)", len(s.Paired), err)
			}
			code, stdout, stderr = runCLI(t, "", "score", "--qrels", filepath.Join(dir, "qrels.tsv"), paths[0])
			if ndcg := fmt.Sprintf("%.2f", 100*g.Metrics[g.Runs[0]]["ndcg_cut_10"].Mean); code != exitOK || !strings.Contains(stdout, ndcg) || !strings.Contains(stdout, "cdr@5") {
				t.Errorf("score: code %d, want nDCG@10 %s and the cdr table:\n%s%s", code, ndcg, stdout, stderr)
			}
		})
	}
}

// TestScoreRules: --mteb-task applies the task's rules (in any case, with a
// note), an unknown task is a usage error, and so are TREC runs without
// --qrels and a run file that is not one.
func TestScoreRules(t *testing.T) {
	dir := t.TempDir()
	qrels, run := filepath.Join(dir, "qrels.tsv"), filepath.Join(dir, "bm25.trec")
	os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\nq1\td2\t1\n"), 0o644)
	os.WriteFile(run, []byte("q1 Q0 q1 1 9 bm25\nq1 Q0 d2 2 8 bm25\n"), 0o644)
	code, stdout, stderr := runCLI(t, "", "score", "--qrels", qrels, "--mteb-task", "arguana", run)
	if code != exitOK || !strings.Contains(stdout, "| bm25 | 1 | 100.00 |") || !strings.Contains(stdout, "1 hits dropped") || !strings.Contains(stderr, "ArguAna") {
		t.Errorf("ArguAna's rule: code %d\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ = runCLI(t, "", "score", "--qrels", qrels, run); code != exitOK || strings.Contains(stdout, "| bm25 | 1 | 100.00 |") {
		t.Errorf("no rule: code %d\n%s", code, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"score", "--qrels", qrels, "--mteb-task", "NoSuchTask", run}, "unknown MTEB retrieval task"},
		{[]string{"compare", run, run}, "give --qrels"},
		{[]string{"score", "--qrels", qrels, qrels}, "want 6 fields"},
		{[]string{"compare", "--qrels", qrels, "--metric", "ndcg", run, run}, "--metric"},
	} {
		if code, _, stderr := runCLI(t, "", tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: code %d, want %d saying %q: %s", tc.args, code, exitUsage, tc.want, stderr)
		}
	}
}
