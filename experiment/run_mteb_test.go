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
	"github.com/msrag/msrag/embedders"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/report"
)

// hashEmbedder opens the non-semantic test embedder, skipping unless the
// tokenizer it uses is present (or failing under CI, where it must be).
func hashEmbedder(tb testing.TB) *hashembed.Hash {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(onnx.ModelsDir(), "all-minilm-l6-v2", onnx.TokenizerFile)); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("the test embedder's tokenizer is absent (scripts/setup.sh): %v", err)
		}
		tb.Fatal(err)
	}
	emb, err := embedders.OpenHash()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { emb.Close() })
	return emb
}

// writeDataset writes a BEIR dataset of 12 documents, 6 judged queries and
// test qrels into dir.
func writeDataset(tb testing.TB, dir string) {
	tb.Helper()
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var docs, queries, qrels strings.Builder
	for d := range 12 {
		var text []string
		for i := range 4 + d*3 {
			text = append(text, words[(d+i*i)%len(words)])
		}
		fmt.Fprintf(&docs, `{"_id": "d%d", "title": "", "text": %q}`+"\n", d, strings.Join(text, " "))
	}
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range 6 {
		fmt.Fprintf(&queries, `{"_id": "q%d", "text": "%s %s"}`+"\n", q, words[q], words[(q*5)%len(words)])
		fmt.Fprintf(&qrels, "q%d\td%d\t1\n", q, (q*5)%12)
	}
	for name, s := range map[string]string{"corpus.jsonl": docs.String(), "queries.jsonl": queries.String(), "qrels/test.tsv": qrels.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestRunWritesMTEB runs an evaluation and reads back the MTEB file of
// every configuration: the same means as results.json, under the names the
// dataset's directory gives.
func TestRunWritesMTEB(t *testing.T) {
	emb := hashEmbedder(t)
	data := filepath.Join(t.TempDir(), "nfcorpus")
	writeDataset(t, data)
	out := t.TempDir()
	res, err := experiment.Run(context.Background(), experiment.Spec{Dataset: data, Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16)},
		K: 20, ChannelK: 20})
	if err != nil {
		t.Fatal(err)
	}
	e, err := report.ReadFile(res.Files.Results)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(e.DatasetFingerprint, "sha256:") || len(e.DatasetFingerprint) != 7+64 || e.Index.CorpusSHA256 == "" {
		t.Errorf("fingerprint %q, corpus sha256 %q", e.DatasetFingerprint, e.Index.CorpusSHA256)
	}
	if e.MTEB == nil || e.MTEB.Task != "NFCorpus" || e.MTEB.DatasetRevision != e.DatasetFingerprint || e.MTEB.MainScore != "ndcg_at_10" {
		t.Fatalf("results.json mteb: %+v", e.MTEB)
	}
	if len(res.Files.MTEB) != len(e.Configs) {
		t.Fatalf("%d MTEB files for %d configurations", len(res.Files.MTEB), len(e.Configs))
	}
	for i, c := range e.Configs {
		path := res.Files.MTEB[i]
		want := filepath.Join(out, "mteb", "results", "msrag__hash-test-embedder-"+c.Name, "no_revision_available", "NFCorpus.json")
		if path != want {
			t.Errorf("%s: MTEB file %s, want %s", c.Name, path, want)
		}
		var tr experiment.TaskResult
		data, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(data, &tr)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := tr.Scores["test"][0]
		for _, m := range c.Results.Metrics {
			name, ok := experiment.MTEBScoreName(m)
			if _, kept := got[name]; ok && kept && got[name] != c.Results.Mean[m] {
				t.Errorf("%s: %s = %v in %s, %v in results.json", c.Name, name, got[name], path, c.Results.Mean[m])
			}
		}
		if got["ndcg_at_20"] != c.Results.Mean["ndcg_cut_20"] || got["ndcg_at_100"] != nil {
			t.Errorf("%s: ndcg_at_20 %v (want %v), ndcg_at_100 %v (k is 20: want none)", c.Name, got["ndcg_at_20"], c.Results.Mean["ndcg_cut_20"], got["ndcg_at_100"])
		}
	}
}

// TestRunMTEBOptions checks the names of a dataset fetched from a hub, given
// ones, and a run that ranks too few documents for MTEB's main score.
func TestRunMTEBOptions(t *testing.T) {
	emb := hashEmbedder(t)
	data := filepath.Join(t.TempDir(), "nfcorpus")
	writeDataset(t, data)
	out := t.TempDir()
	// A dataset fetched from a hub is named by the commit it was fetched at;
	// the task and the languages can be given.
	stamp := `{"repo": "mteb/nfcorpus", "revision": "main", "commit": "0123456789abcdef0123456789abcdef01234567", "files": []}`
	if err := os.WriteFile(filepath.Join(data, hub.StampFile), []byte(stamp), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := experiment.Run(context.Background(), experiment.Spec{Dataset: data, Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8, 16)},
		K: 20, ChannelK: 20, Configs: mustConfigs(t, "rrf", 8, 16),
		MTEB: experiment.MTEBOptions{Task: "MyTask", ForceTask: true, Languages: []string{"eng-Latn", "deu-Latn"}}})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Report.MTEB; m.DatasetRevision != "0123456789abcdef0123456789abcdef01234567" || m.Task != "MyTask" || len(m.Languages) != 2 {
		t.Errorf("mteb of a fetched dataset: %+v", m)
	}
	if filepath.Base(res.Files.MTEB[0]) != "MyTask.json" {
		t.Errorf("MTEB file %v", res.Files.MTEB)
	}

	// Ranking fewer documents than the main score's cutoff writes no MTEB
	// file, and says why; the evaluation itself succeeds.
	var log strings.Builder
	out3 := t.TempDir()
	res, err = experiment.Run(context.Background(), experiment.Spec{Dataset: data, Out: out3, Build: msrag.Config{Out: filepath.Join(out, "index"), Embedder: emb, Windows: chunk.Sizes(8, 16)},
		K: 5, ChannelK: 20, Configs: mustConfigs(t, "rrf", 8, 16), Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.MTEB != nil || len(res.Files.MTEB) != 0 || !strings.Contains(log.String(), "no MTEB result files") {
		t.Errorf("k 5: mteb %+v, files %v, log:\n%s", res.Report.MTEB, res.Files.MTEB, log.String())
	}
	if _, err := os.Stat(filepath.Join(out3, "mteb")); err == nil {
		t.Errorf("k 5: %s/mteb exists", out3)
	}
}

func mustConfigs(tb testing.TB, s string, sizes ...int) []experiment.Config {
	tb.Helper()
	c, err := experiment.ParseConfigs(s, experiment.EvalLayout(chunk.Sizes(sizes...)))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
