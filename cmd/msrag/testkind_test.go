package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	_ "github.com/msrag/msrag/internal/testkind" // the kind "overlap", registered in this binary (and the processes it starts)
)

// TestNewKindThroughEveryCommand checks that a kind of channel registered
// by a package (internal/testkind, "overlap") is built by msrag index and
// msrag eval, searched and fused by msrag search, evaluated (alone, in
// hybrids, in oracles), tuned over, and searched by scatter-gather, with
// nothing in the commands written for it.
func TestNewKindThroughEveryCommand(t *testing.T) {
	hashTokenizer(t)
	data, shards := shardedTiny(t, 2, "--channel", "overlap")
	dir := t.TempDir()
	m, err := msrag.ReadManifest(filepath.Join(shards, "shard-0"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Channels["overlap"]; !ok || m.FormatVersion != 5 {
		t.Fatalf("manifest format %d, channels %v", m.FormatVersion, m.Channels)
	}
	run := filepath.Join(dir, "run.jsonl")
	if code, _, stderr := runCLI(t, "", "search", "--index", shards, "--queries", data, "--fusion", "rrf:windows=overlap", "--format", "jsonl", "--out", run, "--quiet"); code != exitOK {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(run); !strings.Contains(string(b), `"channel":"ovl-w16"`) {
		t.Errorf("search run without overlap evidence: %.300s", b)
	}
	common := []string{"--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32", "--k", "20", "--window-k", "20", "--channel", "overlap", "--quiet"}
	out := filepath.Join(dir, "eval")
	if code, _, stderr := runCLI(t, "", append([]string{"eval", "--index", shards, "--out", out}, common...)...); code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	e := readEval(t, out)
	for _, name := range []string{"ovl-w16", "ovl-w32", "rrf:windows=overlap", "oracle:overlap", "rrf:windows=all"} {
		if e.Config(name) == nil {
			t.Errorf("eval has no configuration %s (it has %d)", name, len(e.Configs))
		}
	}
	if c := e.Config("ovl-w16"); c != nil && c.Channels != "overlap" {
		t.Errorf("ovl-w16 ranks from %q channels", c.Channels)
	}
	model := filepath.Join(dir, "fusion.json")
	if code, _, stderr := runCLI(t, "", "tune", "--dataset", data, "--split", "test", "--index", shards, "--out", model, "--folds", "2", "--quiet"); code != exitOK {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	var fm struct {
		Windows []struct{ Kind, Name string }
	}
	b, _ := os.ReadFile(model)
	if err := json.Unmarshal(b, &fm); err != nil || !slices.ContainsFunc(fm.Windows, func(w struct{ Kind, Name string }) bool { return w.Kind == "overlap" }) {
		t.Errorf("fusion model windows %+v: %v", fm.Windows, err)
	}
	// Built by msrag eval too, and searched by scatter-gather.
	built := filepath.Join(dir, "built")
	if code, _, stderr := runCLI(t, "", append([]string{"eval", "--out", built}, common...)...); code != exitOK {
		t.Fatalf("eval building its index: exit %d: %s", code, stderr)
	}
	sg := []string{"search", "--index", shards, "--queries", data, "--fusion", "rrf:windows=all", "--batch", "4", "--quiet"}
	one, gathered := filepath.Join(dir, "one.trec"), filepath.Join(dir, "sg.trec")
	if code, _, stderr := runCLI(t, "", append(append([]string{}, sg...), "--out", one)...); code != exitOK {
		t.Fatalf("search: exit %d: %s", code, stderr)
	}
	phases(t, 2, filepath.Join(dir, "work"), append(sg, "--out", gathered)...)
	a, _ := os.ReadFile(one)
	g, _ := os.ReadFile(gathered)
	if len(a) == 0 || string(a) != string(g) {
		t.Errorf("scatter-gather with overlap channels differs from one process")
	}
	if code, _, stderr := runCLI(t, "", "index", "--corpus", data, "--out", filepath.Join(dir, "x"), "--channel", "sparse", "--model", "hash-test-embedder"); code != exitUsage || !strings.Contains(stderr, "no such kind of channel") {
		t.Errorf("--channel sparse: exit %d: %s", code, stderr)
	}
}
