package eval_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// TestRulesMatchMTEB scores a run whose queries are documents of their own
// corpus under each combination of MTEB's per-task rules and compares with
// the scores of mteb's own RetrievalEvaluator (scripts/gen_rules_golden.py).
func TestRulesMatchMTEB(t *testing.T) {
	base := filepath.Join("testdata", "rules", "self")
	rows, err := corpus.ReadQrels(base+".qrels", corpus.Options{Format: corpus.FormatTSV})
	if err != nil {
		t.Fatal(err)
	}
	q := eval.Qrels(corpus.Judgements(rows))
	run, err := eval.ReadRunFile(base + ".run")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(base + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var g struct {
		Cases []struct {
			Rules eval.Rules         `json:"rules"`
			Mean  map[string]float64 `json:"mean"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) != 4 {
		t.Fatalf("%d cases in %s.json, want 4", len(g.Cases), base)
	}
	for _, c := range g.Cases {
		name, _ := json.Marshal(c.Rules)
		t.Run(string(name), func(t *testing.T) {
			scored, _ := c.Rules.Apply(run)
			var metrics []string
			for m := range c.Mean {
				metrics = append(metrics, m)
			}
			slices.Sort(metrics)
			got, err := eval.Evaluate(q, scored, metrics...)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range metrics {
				tol := 5e-6 + 1e-12 // MTEB rounds to 5 decimals all but MRR
				if strings.HasPrefix(m, "mrr_") {
					tol = 1e-12
				}
				if d := math.Abs(got.Mean[m] - c.Mean[m]); d > tol {
					t.Errorf("%s: %.10f, mteb %.10f", m, got.Mean[m], c.Mean[m])
				}
			}
		})
	}
}

// TestRulesApply checks what each rule drops, and that the run given is
// left as it was.
func TestRulesApply(t *testing.T) {
	run := eval.Run{
		"a": {{Doc: "a", Score: 0.9}, {Doc: "b", Score: 0.8}, {Doc: "c", Score: 0.7}},
		"b": {{Doc: "c", Score: 0.5}, {Doc: "a", Score: 0.6}},
		"c": {},
	}
	cases := []struct {
		rules   eval.Rules
		want    map[string][]string
		dropped int
	}{
		{eval.Rules{}, map[string][]string{"a": {"a", "b", "c"}, "b": {"c", "a"}, "c": {}}, 0},
		{eval.Rules{IgnoreIdenticalIDs: true}, map[string][]string{"a": {"b", "c"}, "b": {"c", "a"}, "c": {}}, 1},
		{eval.Rules{SkipFirstResult: true}, map[string][]string{"a": {"b", "c"}, "b": {"c"}, "c": {}}, 2},
		{eval.Rules{IgnoreIdenticalIDs: true, SkipFirstResult: true}, map[string][]string{"a": {"c"}, "b": {"c"}, "c": {}}, 3},
	}
	for _, tc := range cases {
		got, n := tc.rules.Apply(run)
		if n != tc.dropped {
			t.Errorf("%+v: dropped %d, want %d", tc.rules, n, tc.dropped)
		}
		for qid, want := range tc.want {
			var docs []string
			for _, h := range got[qid] {
				docs = append(docs, h.Doc)
			}
			if strings.Join(docs, ",") != strings.Join(want, ",") {
				t.Errorf("%+v: query %s keeps %v, want %v", tc.rules, qid, docs, want)
			}
		}
	}
	if len(run["a"]) != 3 || len(run["b"]) != 2 {
		t.Errorf("Apply changed the run given: %v", run)
	}
}
