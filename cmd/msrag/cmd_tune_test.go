package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/tune"
)

// TestTuneRefusesNothingToLearn checks that tune stops, naming what is
// wrong, on an index of another corpus and on qrels that judge no document
// of the index, and writes no model either way.
func TestTuneRefusesNothingToLearn(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data, evalOut := filepath.Join(dir, "tiny"), filepath.Join(dir, "eval")
	writeTinyDataset(t, data)
	code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32",
		"--out", evalOut, "--k", "20", "--window-k", "20", "--quiet")
	if code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	index := filepath.Join(evalOut, "index")

	// The same corpus, qrels naming documents the corpus lacks.
	foreign := filepath.Join(dir, "foreign")
	writeTinyDataset(t, foreign)
	var qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range 10 {
		qrels.WriteString("q" + string(rune('0'+q)) + "\tother-" + string(rune('0'+q)) + "\t1\n")
	}
	if err := os.WriteFile(filepath.Join(foreign, "qrels", "test.tsv"), []byte(qrels.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// Another corpus: one document's text changed.
	other := filepath.Join(dir, "other")
	writeTinyDataset(t, other)
	raw, _ := os.ReadFile(filepath.Join(other, "corpus.jsonl"))
	os.WriteFile(filepath.Join(other, "corpus.jsonl"), []byte(strings.Replace(string(raw), "alpha", "omega", 1)), 0o644)

	for _, tc := range []struct {
		name, dataset, want string
	}{
		{"qrels of no document of the index", foreign, `none of the 10 documents ` + foreign + ` split test judges relevant (such as "other-0") is in index ` + index + ` (30 documents)`},
		{"index of another corpus", other, "tune: --index " + index + " and --dataset " + other + " disagree: index " + index + " was built from " + filepath.Join(data, "corpus.jsonl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, "fusion-"+filepath.Base(tc.dataset)+".json")
			code, _, stderr := runCLI(t, "", "tune", "--dataset", tc.dataset, "--split", "test", "--index", index,
				"--out", out, "--quiet")
			if code != exitFailure || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q: want exit 1 with %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestTuneLexicalEndToEnd tunes on an index with lexical windows (the
// default) and evaluates the fusion model on other queries: the model
// records every channel, the whole-document one included, and reads back.
func TestTuneLexicalEndToEnd(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data, evalOut := filepath.Join(dir, "tiny"), filepath.Join(dir, "eval")
	writeTinyDataset(t, data)
	splitTrainDev(t, data)
	common := []string{"--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32", "--k", "20", "--window-k", "20", "--quiet"}
	if code, _, stderr := runCLI(t, "", append([]string{"eval", "--split", "train", "--out", evalOut}, common...)...); code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	model := filepath.Join(dir, "fusion.json")
	index := filepath.Join(evalOut, "index")
	if code, _, stderr := runCLI(t, "", "tune", "--dataset", data, "--split", "train", "--index", index, "--out", model, "--folds", "2", "--quiet"); code != exitOK {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "dev")
	code, _, stderr := runCLI(t, "", append([]string{"eval", "--split", "dev", "--index", index, "--out", out, "--fusion-model", model}, common...)...)
	if code != exitOK {
		t.Fatalf("eval --fusion-model of a lexical index: exit %d: %s", code, stderr)
	}
	e := readEval(t, out)
	if l := e.Config("learned"); l == nil || l.Channels != report.ChannelsHybrid || !strings.Contains(l.Fusion, "bm25-doc") {
		t.Fatalf("learned configuration %+v, want a hybrid over every channel", l)
	}
}

// splitTrainDev gives the tiny dataset in data a train split (queries q0 to
// q4) and a dev split (the others) from its test judgements.
func splitTrainDev(t *testing.T, data string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(data, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	train, dev := []string{lines[0]}, []string{lines[0]}
	for _, l := range lines[1:] {
		if q := l[:strings.IndexByte(l, '\t')]; q < "q5" {
			train = append(train, l)
		} else {
			dev = append(dev, l)
		}
	}
	for name, ls := range map[string][]string{"train": train, "dev": dev} {
		if err := os.WriteFile(filepath.Join(data, "qrels", name+".tsv"), []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTuneLexicalOnly: msrag tune on an index of lexical windows only died
// in the router ("router: inconsistent shape: 0 query floats of 0 dims")
// after fitting the linear rule; it writes the linear rule, says the
// router needs query vectors, and eval and search take the rule. Real
// processes.
func TestTuneLexicalOnly(t *testing.T) {
	dir := t.TempDir()
	tok := testfiles.BERTUncased(t, dir)
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	splitTrainDev(t, data)
	idx, model := filepath.Join(dir, "idx"), filepath.Join(dir, "fusion.json")
	if code, _, stderr := limitedRun(t, time.Minute, "index", "--corpus", data, "--out", idx, "--model", "none", "--tokenizer", tok, "--windows", "16,32", "--quiet"); code != exitOK {
		t.Fatal(stderr)
	}
	code, _, stderr := limitedRun(t, time.Minute, "tune", "--dataset", data, "--split", "train", "--index", idx, "--out", model, "--folds", "2")
	if code != exitOK || !strings.Contains(stderr, "tune: no router: it weighs the windows from the query's embedding, and the index has no model") {
		t.Fatalf("tune of a lexical-only index: code %d, want the linear rule and a line on the router:\n%s", code, stderr)
	}
	m, err := tune.ReadFusionModel(model)
	if err != nil || m.Router != nil || !strings.HasPrefix(m.Rule, "linear:") {
		t.Fatalf("fusion model: %+v, %v; want a linear rule without a router", m, err)
	}
	out := filepath.Join(dir, "eval")
	code, _, stderr = limitedRun(t, time.Minute, "eval", "--dataset", data, "--split", "dev", "--model", "none", "--tokenizer", tok, "--windows", "16,32",
		"--index", idx, "--out", out, "--fusion-model", model, "--quiet")
	if code != exitOK {
		t.Fatalf("eval --fusion-model of the lexical rule: code %d:\n%s", code, stderr)
	}
	if e := readEval(t, out); e.Config("learned") == nil || e.Config("learned+router") != nil {
		t.Errorf("eval configurations: want learned and no learned+router")
	}
	queries := filepath.Join(data, "queries.jsonl")
	if code, _, stderr = limitedRun(t, time.Minute, "search", "--index", idx, "--queries", queries, "--fusion-model", model); code != exitOK {
		t.Errorf("search --fusion-model: code %d:\n%s", code, stderr)
	}
	code, _, stderr = limitedRun(t, time.Minute, "search", "--index", idx, "--queries", queries, "--fusion-model", model, "--fusion", "learned+router")
	if code != exitUsage || !strings.Contains(stderr, "the fusion model has no router") {
		t.Errorf("search --fusion learned+router: code %d, want a usage error:\n%s", code, stderr)
	}
}

// TestTuneSeveralDatasets fits one model on two datasets' training queries
// (real processes): it records both, its router reads the kind features,
// eval takes it on a split it has not seen; one index per dataset, a known
// --router and indices of one set of windows are required, and what is
// refused writes nothing.
func TestTuneSeveralDatasets(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	index := map[string]string{}
	for _, name := range []string{"tiny", "other", "narrow"} {
		data := filepath.Join(dir, name)
		writeTinyDataset(t, data)
		splitTrainDev(t, data)
		if name != "tiny" { // another corpus
			raw, _ := os.ReadFile(filepath.Join(data, "corpus.jsonl"))
			os.WriteFile(filepath.Join(data, "corpus.jsonl"), []byte(strings.Replace(string(raw), "alpha", "omega", 1)), 0o644)
		}
		windows := "16,32"
		if name == "narrow" {
			windows = "16"
		}
		out := filepath.Join(dir, "eval-"+name)
		if code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--split", "train", "--model", "hash-test-embedder", "--windows", windows,
			"--out", out, "--k", "20", "--window-k", "20", "--quiet"); code != exitOK {
			t.Fatalf("eval %s: exit %d: %s", name, code, stderr)
		}
		index[name] = filepath.Join(out, "index")
	}
	tiny, other := filepath.Join(dir, "tiny"), filepath.Join(dir, "other")
	model := filepath.Join(dir, "fusion.json")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an index short", []string{"--dataset", tiny, "--dataset", other, "--index", index["tiny"]}, exitUsage, "2 --dataset and 1 --index"},
		{"unknown router", []string{"--dataset", tiny, "--index", index["tiny"], "--router", "windows"}, exitUsage, `--router "windows": want embedding or kinds`},
		{"other windows", []string{"--dataset", tiny, "--dataset", filepath.Join(dir, "narrow"), "--index", index["tiny"], "--index", index["narrow"]}, exitFailure, "one fit takes indices of one set of windows"},
	} {
		code, _, stderr := runCLI(t, "", append([]string{"tune", "--out", model, "--folds", "2", "--quiet"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q: want exit %d with %q", tc.name, code, stderr, tc.code, tc.want)
		}
		if _, err := os.Stat(model); err == nil {
			t.Fatalf("%s: %s was written", tc.name, model)
		}
	}
	if code, _, stderr := runCLI(t, "", "tune", "--dataset", tiny, "--index", index["tiny"], "--dataset", other, "--index", index["other"],
		"--out", model, "--folds", "2", "--loss-aversion", "0.5", "--quiet"); code != exitOK {
		t.Fatalf("tune of two datasets: exit %d: %s", code, stderr)
	}
	m, err := tune.ReadFusionModel(model)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Training) != 2 || m.Training[1].Dataset != "other" || m.Router == nil || !m.Transfers() {
		t.Fatalf("model trained on %+v, router %+v", m.Training, m.Router)
	}
	var ch tune.Choice
	if err := json.Unmarshal(m.Choice, &ch); err != nil || ch.LossAversion != 0.5 {
		t.Errorf("the fit records loss aversion %v (%v), want --loss-aversion's 0.5", ch.LossAversion, err)
	}
	out := filepath.Join(dir, "dev")
	if code, _, stderr := runCLI(t, "", "eval", "--dataset", tiny, "--split", "dev", "--model", "hash-test-embedder", "--windows", "16,32",
		"--index", index["tiny"], "--out", out, "--k", "20", "--window-k", "20", "--fusion-model", model, "--quiet"); code != exitOK {
		t.Fatalf("eval --fusion-model on dev: exit %d: %s", code, stderr)
	}
	if e := readEval(t, out); e.Config("learned+router") == nil {
		t.Error("eval lacks learned+router")
	}
	code, _, stderr := runCLI(t, "", "eval", "--dataset", other, "--split", "train", "--model", "hash-test-embedder", "--windows", "16,32",
		"--index", index["other"], "--out", filepath.Join(dir, "seen"), "--k", "20", "--window-k", "20", "--fusion-model", model, "--quiet")
	if code != exitFailure || !strings.Contains(stderr, "other split train") {
		t.Errorf("eval on training queries of the second dataset: exit %d, %q", code, stderr)
	}
}
