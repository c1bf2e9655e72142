package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
)

// aloneFlags build an index whose only channels are the test kind's
// ("overlap"), with parameters params: no model, no lexical windows.
func aloneFlags(params string) []string {
	return []string{"--model", "none", "--tokenizer", "all-minilm-l6-v2", "--no-lexical", "--channel", "overlap:" + params, "--windows", "16,32", "--quiet"}
}

// overlapRecord reads the overlap section of the manifest in dir.
func overlapRecord(t *testing.T, dir string) (rec struct {
	Min    int
	Weight string
}) {
	t.Helper()
	m, err := msrag.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Lexical != nil || !m.Model.None() || len(m.Channels) != 1 {
		t.Fatalf("%s: lexical %v, model %s, channels %v: want the overlap channels alone", dir, m.Lexical != nil, m.Model.Name, m.Channels)
	}
	if err := json.Unmarshal(m.Channels["overlap"], &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestKindAloneThroughEveryCommand checks that the test kind, with the
// parameters --channel gives it, is an index's only channel: built whole
// and in shards, searched exactly alike in one process and through the
// scatter phases (its statistics added over the shards: weight=rare
// weighs words by the rows of every shard), evaluated and tuned. A key or
// value the kind does not take is a usage error naming the kind and key.
func TestKindAloneThroughEveryCommand(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	flags := aloneFlags("weight=rare,min=1")
	one := filepath.Join(dir, "one")
	if code, _, stderr := runCLI(t, "", append([]string{"index", "--corpus", data, "--out", one}, flags...)...); code != exitOK {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	if rec := overlapRecord(t, one); rec.Min != 1 || rec.Weight != "rare" {
		t.Fatalf("the flags did not reach the kind: %+v", rec)
	}
	shards := filepath.Join(dir, "shards")
	for i := range 2 {
		args := append([]string{"index", "--corpus", data, "--out", filepath.Join(shards, fmt.Sprintf("shard-%d", i)), "--shard", fmt.Sprintf("%d/2", i), "--block-lines", "4"}, flags...)
		if code, _, stderr := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("index shard %d: exit %d: %s", i, code, stderr)
		}
	}
	search := func(index string) []string {
		return []string{"search", "--index", index, "--queries", data, "--fusion", "rrf:windows=overlap", "--k", "20", "--batch", "4", "--quiet"}
	}
	runs := map[string]string{}
	for name, index := range map[string]string{"one": one, "shards": shards} {
		runs[name] = filepath.Join(dir, name+".trec")
		if code, _, stderr := runCLI(t, "", append(search(index), "--out", runs[name])...); code != exitOK {
			t.Fatalf("search %s: exit %d: %s", name, code, stderr)
		}
	}
	runs["phases"] = filepath.Join(dir, "phases.trec")
	phases(t, 2, filepath.Join(dir, "work"), append(search(shards), "--out", runs["phases"])...)
	want, _ := os.ReadFile(runs["one"])
	if len(want) == 0 {
		t.Fatal("the one index's run is empty")
	}
	for _, name := range []string{"shards", "phases"} {
		if got, _ := os.ReadFile(runs[name]); string(got) != string(want) {
			t.Errorf("%s ranks otherwise than one index:\n%.400s\nwant\n%.400s", name, got, want)
		}
	}
	out := filepath.Join(dir, "eval")
	if code, _, stderr := runCLI(t, "", append([]string{"eval", "--dataset", data, "--index", shards, "--out", out, "--k", "20", "--window-k", "20"}, flags...)...); code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	var names []string
	for _, c := range readEval(t, out).Configs {
		names = append(names, c.Name)
	}
	for _, n := range []string{"ovl-w16", "ovl-w32", "rrf", "oracle"} {
		if !slices.Contains(names, n) {
			t.Errorf("eval has no configuration %s (it has %v)", n, names)
		}
	}
	model := filepath.Join(dir, "fusion.json")
	if code, _, stderr := runCLI(t, "", "tune", "--dataset", data, "--split", "test", "--index", shards, "--out", model, "--folds", "2", "--quiet"); code != exitOK {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(model); !strings.Contains(string(b), `"kind":"overlap"`) && !strings.Contains(string(b), `"kind": "overlap"`) {
		t.Errorf("the fusion model fuses no overlap channel: %.300s", b)
	}
	for params, msg := range map[string]string{
		"depth=2": "--channel overlap: key depth: no such parameter (want min, weight)",
		"min=0":   "--channel overlap: key min \"0\": want a number from 1",
		"weight=": "--channel overlap: key weight \"\": want count or rare",
	} {
		code, _, stderr := runCLI(t, "", append([]string{"index", "--corpus", data, "--out", filepath.Join(dir, "bad")}, aloneFlags(params)...)...)
		if code != exitUsage || !strings.Contains(stderr, msg) {
			t.Errorf("--channel overlap:%s: exit %d: %s", params, code, stderr)
		}
	}
}

// TestKindParamsDecideReuse checks that eval sees the test kind's
// parameters: its own index, built with other ones, is built again; one
// msrag index built is refused, naming the parameter.
func TestKindParamsDecideReuse(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	out := filepath.Join(dir, "eval")
	eval := func(params string, extra ...string) (int, string) {
		flags := slices.DeleteFunc(aloneFlags(params), func(f string) bool { return f == "--quiet" }) // its log says why it builds
		code, _, stderr := runCLI(t, "", append(append([]string{"eval", "--dataset", data, "--out", out, "--k", "20", "--window-k", "20"}, flags...), extra...)...)
		return code, stderr
	}
	if code, stderr := eval("min=1"); code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	if code, stderr := eval("min=2"); code != exitOK || !strings.Contains(stderr, "building index") || !strings.Contains(stderr, "its overlap channels are min=1, not min=2") {
		t.Errorf("eval with min=2 over its index of min=1: exit %d, want it built again:\n%s", code, stderr)
	}
	if rec := overlapRecord(t, filepath.Join(out, "index")); rec.Min != 2 {
		t.Errorf("the index eval built again has min %d", rec.Min)
	}
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", append([]string{"index", "--corpus", data, "--out", idx}, aloneFlags("weight=count")...)...); code != exitOK {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	code, stderr := eval("weight=rare", "--index", idx)
	if code == exitOK || !strings.Contains(stderr, "its overlap channels are weight=count, not weight=rare") {
		t.Errorf("eval with weight=rare of an index of weight=count: exit %d, want it refused:\n%s", code, stderr)
	}
}
