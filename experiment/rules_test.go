package experiment_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/report"
)

// TestMTEBRules checks the table read from mteb's task definitions: the
// ArguAna tasks drop identical ids, SciFact has no rule, and names are
// taken in mteb's spelling only.
func TestMTEBRules(t *testing.T) {
	for task, want := range map[string]eval.Rules{
		"ArguAna": {IgnoreIdenticalIDs: true}, "ArguAna-PL": {IgnoreIdenticalIDs: true}, "ArguAna-NL": {IgnoreIdenticalIDs: true},
		"SciFact": {}, "NFCorpus": {}, "arguana": {}, "tiny": {},
	} {
		if got := experiment.MTEBRules(task); got != want {
			t.Errorf("MTEBRules(%q) = %+v, want %+v", task, got, want)
		}
	}
}

// writeSelfDataset writes a dataset whose 6 queries are documents of its 12:
// each query has a document's id and text, and is judged relevant to
// another document.
func writeSelfDataset(tb testing.TB, dir string) {
	tb.Helper()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var docs, queries, qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for d := range 12 {
		text := fmt.Sprintf("%s %s %s %s", words[d], words[(d+1)%12], words[(d+5)%12], words[(d*7)%12])
		fmt.Fprintf(&docs, `{"_id": "d%d", "title": "", "text": %q}`+"\n", d, text)
		if d < 6 {
			fmt.Fprintf(&queries, `{"_id": "d%d", "text": %q}`+"\n", d, text)
			fmt.Fprintf(&qrels, "d%d\td%d\t1\n", d, d+6)
		}
	}
	for name, s := range map[string]string{"corpus.jsonl": docs.String(), "queries.jsonl": queries.String(), "qrels/test.tsv": qrels.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRunAppliesMTEBRules evaluates a dataset named arguana, whose queries
// are its own documents: by the task's rule each query's own document is
// dropped from every run before scoring, the rule and its source recorded
// in results.json and the MTEB files; forced off, the runs keep them.
func TestRunAppliesMTEBRules(t *testing.T) {
	emb := hashEmbedder(t)
	data := filepath.Join(t.TempDir(), "arguana")
	writeSelfDataset(t, data)
	index := filepath.Join(t.TempDir(), "index")
	off := false
	for _, tc := range []struct {
		name    string
		opts    experiment.MTEBOptions
		rule    bool
		source  string
		selfHit bool
	}{
		{"task", experiment.MTEBOptions{}, true, "mteb " + experiment.MTEBVersion + " task ArguAna", false},
		{"forced off", experiment.MTEBOptions{IgnoreIdenticalIDs: &off}, false, "given, over mteb " + experiment.MTEBVersion + " task ArguAna", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			res, err := experiment.Run(context.Background(), experiment.Spec{Dataset: data, Out: out,
				Build: msrag.Config{Out: index, Embedder: emb, Windows: chunk.Sizes(8, 16)},
				K:     20, ChannelK: 20, Configs: mustConfigs(t, "w8,rrf", 8, 16), MTEB: tc.opts})
			if err != nil {
				t.Fatal(err)
			}
			e, err := report.ReadFile(res.Files.Results)
			if err != nil {
				t.Fatal(err)
			}
			sc := e.Scoring
			if sc.IgnoreIdenticalIDs != tc.rule || sc.SkipFirstResult || sc.Source != tc.source || (sc.Dropped > 0) != tc.rule {
				t.Errorf("results.json scoring %+v; want ignore_identical_ids %v from %q, hits dropped", sc, tc.rule, tc.source)
			}
			for _, c := range e.Configs {
				run, err := eval.ReadRunFile(filepath.Join(out, c.RunFile))
				if err != nil {
					t.Fatal(err)
				}
				self := 0
				for qid, hits := range run {
					for _, h := range hits {
						if h.Doc == qid {
							self++
						}
					}
				}
				if (self > 0) != tc.selfHit {
					t.Errorf("%s: %d queries retrieve their own document in the run file", c.Name, self)
				}
				// The scores are those of the run file as written.
				want, err := eval.Evaluate(res.Qrels, run, c.Results.Metrics...)
				if err != nil {
					t.Fatal(err)
				}
				if want.Mean["ndcg_cut_10"] != c.Results.Mean["ndcg_cut_10"] {
					t.Errorf("%s: nDCG@10 %v, of its run file %v", c.Name, c.Results.Mean["ndcg_cut_10"], want.Mean["ndcg_cut_10"])
				}
			}
			if len(res.Files.MTEB) == 0 {
				t.Fatal("no MTEB files written")
			}
			for _, path := range res.Files.MTEB {
				var tr experiment.TaskResult
				data, err := os.ReadFile(path)
				if err == nil {
					err = json.Unmarshal(data, &tr)
				}
				if err != nil {
					t.Fatal(err)
				}
				if tr.Msrag.Scoring != sc {
					t.Errorf("%s: scoring %+v, results.json %+v", path, tr.Msrag.Scoring, sc)
				}
			}
		})
	}
}
