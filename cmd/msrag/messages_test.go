package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesPointTheWay: a mistyped flag names the one meant, --version
// prints the version, help groups the flags of models behind a server,
// an unknown rule lists the index's channels, each out-of-range flag is
// named, a query file's errors name the fields and formats msrag reads, a
// mistyped model name is a usage error, and msrag help data lists fetch.
func TestMessagesPointTheWay(t *testing.T) {
	hashTokenizer(t)
	data, dir := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", data, "--out", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--quiet"); code != exitOK {
		t.Fatalf("index: code %d\n%s", code, stderr)
	}
	idQuery := filepath.Join(dir, "q.jsonl")
	os.WriteFile(idQuery, []byte(`{"id": "1", "query": "alpha"}`+"\n"), 0o644)
	csv := filepath.Join(dir, "q.csv")
	os.WriteFile(csv, []byte("id,text\n1,alpha\n"), 0o644)
	queries := filepath.Join(data, "queries.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"suggest", []string{"eval", "--dataset", data, "--out", dir, "--window", "64,128"}, exitUsage, []string{"--window: no such flag (did you mean --windows?)"}},
		{"version", []string{"--version"}, exitOK, []string{"msrag "}},
		{"categories", []string{"index", "--help"}, exitOK, []string{"Model behind a server\n\n   --batch-texts", "Device\n\n"}},
		{"unknown rule", []string{"search", "--index", idx, "--queries", queries, "--fusion", "bm25"}, exitUsage, []string{`unknown rule "bm25"`, "w16, w32, bm25-w16, bm25-w32, bm25-doc"}},
		{"k", []string{"search", "--index", idx, "--queries", queries, "-k", "0"}, exitUsage, []string{"--k 0: must be at least 1"}},
		{"window-k", []string{"search", "--index", idx, "--queries", queries, "--window-k", "0"}, exitUsage, []string{"--window-k 0: must be at least 1"}},
		{"eval batch", []string{"eval", "--dataset", data, "--out", dir, "--batch", "0"}, exitUsage, []string{"--batch 0: must be at least 1"}},
		{"query fields", []string{"search", "--index", idx, "--queries", idQuery}, exitFailure, []string{"missing or empty id", `"_id"`, `"text"`}},
		{"csv", []string{"search", "--index", idx, "--queries", csv}, exitFailure, []string{"q.csv", "cannot tell the format", ".tsv", ".txt", ".jsonl"}},
		{"model typo", []string{"index", "--corpus", data, "--out", filepath.Join(dir, "x"), "--model", "all-minilm-l6-v2-int9"}, exitUsage, []string{"all-minilm-l6-v2-int9", "unknown model"}},
		{"help data", []string{"help", "data"}, exitOK, []string{"COMMANDS:\n   fetch "}},
		{"text with trec", []string{"search", "--index", idx, "--queries", queries, "--text"}, exitUsage, []string{"--text puts chunk texts in the evidence"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("code %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, stdout, stderr)
				}
			}
		})
	}
}

// TestJSONLEvidenceTextAndChannel: search --format jsonl --text gives each
// chunk's text, the span of the document's title and text, and every
// kind's evidence names its channel.
func TestJSONLEvidenceTextAndChannel(t *testing.T) {
	hashTokenizer(t)
	data, dir := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", data, "--out", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--quiet"); code != exitOK {
		t.Fatalf("index: code %d\n%s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", "search", "--index", idx, "--queries", filepath.Join(data, "queries.jsonl"), "--format", "jsonl", "--text", "--k", "3")
	if code != exitOK {
		t.Fatalf("code %d\n%s", code, stderr)
	}
	channels := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var q struct {
			Hits []struct {
				DocID    string           `json:"doc_id"`
				Evidence []map[string]any `json:"evidence"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		for _, h := range q.Hits {
			for _, ev := range h.Evidence {
				ch, _ := ev["channel"].(string)
				text, _ := ev["text"].(string)
				start, end := ev["start"].(float64), ev["end"].(float64)
				if ch == "" || text == "" || len(text) != int(end-start) {
					t.Fatalf("document %s: evidence %v lacks its channel or its text", h.DocID, ev)
				}
				channels[ch] = true
			}
		}
	}
	if !channels["w16"] || !channels["bm25-doc"] {
		t.Errorf("channels in the evidence: %v, want dense and lexical ones", channels)
	}
}
