package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/report"
)

// hashTokenizer skips unless the tokenizer the hash test embedder uses is
// present (or CI is set, where its absence fails).
func hashTokenizer(tb testing.TB) {
	tb.Helper()
	p := filepath.Join(onnx.ModelsDir(), "all-minilm-l6-v2", onnx.TokenizerFile)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("%s absent (scripts/setup.sh)", p)
		}
		tb.Fatalf("%s absent under CI", p)
	}
}

var evalWords = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega")

// writeTinyDataset writes a BEIR dataset of 30 documents of 5 to 80 words,
// 11 queries (10 judged) and test qrels into dir.
func writeTinyDataset(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		tb.Fatal(err)
	}
	var corpus, queries, qrels strings.Builder
	for d := range 30 {
		var words []string
		for i := range 5 + (d*7)%76 {
			words = append(words, evalWords[(d*3+i*i)%len(evalWords)])
		}
		fmt.Fprintf(&corpus, `{"_id": "d%d", "title": "doc %d", "text": %q}`+"\n", d, d, strings.Join(words, " "))
	}
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for q := range 11 {
		text := fmt.Sprintf("%s %s %s", evalWords[q], evalWords[(q*5)%len(evalWords)], evalWords[(q*11+3)%len(evalWords)])
		fmt.Fprintf(&queries, `{"_id": "q%d", "text": %q}`+"\n", q, text)
		if q < 10 { // q10 has no judgements: not searched
			fmt.Fprintf(&qrels, "q%d\td%d\t1\n", q, (q*7)%30)
			if q%3 == 0 {
				fmt.Fprintf(&qrels, "q%d\td%d\t1\n", q, (q*7+13)%30)
			}
		}
	}
	for name, s := range map[string]string{"corpus.jsonl": corpus.String(), "queries.jsonl": queries.String(), "qrels/test.tsv": qrels.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func readEval(tb testing.TB, out string) *report.Eval {
	tb.Helper()
	e, err := report.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func TestEvalEndToEnd(t *testing.T) {
	hashTokenizer(t)
	data, out := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	args := []string{"eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32", "--out", out, "--k", "20", "--window-k", "20", "--no-lexical"}

	code, stdout, stderr := runCLI(t, "", args...)
	if code != exitOK {
		t.Fatalf("eval: code %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "eval: building index "+filepath.Join(out, "index")+": no index") {
		t.Errorf("first run does not say it builds the index:\n%s", stderr)
	}
	e := readEval(t, out)
	var names []string
	for _, c := range e.Configs {
		names = append(names, c.Name)
	}
	wantNames := []string{"w16", "w32", "rrf", "maxp", "full", "oracle"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("configurations %v, want %v", names, wantNames)
	}
	if e.Queries != 10 || e.Docs != 30 || e.Split != "test" || e.Dataset != "tiny" || e.Model.Name != "hash-test-embedder" ||
		!slices.Equal(e.Windows, []int{16, 32}) || e.FullWindow != 510 || e.Index.Reused {
		t.Errorf("results.json header: queries %d, docs %d, split %q, dataset %q, model %q, windows %v, full %d, reused %v",
			e.Queries, e.Docs, e.Split, e.Dataset, e.Model.Name, e.Windows, e.FullWindow, e.Index.Reused)
	}
	rows, err := corpus.ReadQrels(filepath.Join(data, "qrels", "test.tsv"), corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	qrels := eval.Qrels(corpus.Judgements(rows))
	for _, c := range e.Configs {
		if c.Results.NumQueries != 10 || len(c.Results.PerQuery) != 10 || len(c.Results.Mean) != len(eval.DefaultMetrics()) {
			t.Errorf("%s: %d queries (%d per-query rows), %d means", c.Name, c.Results.NumQueries, len(c.Results.PerQuery), len(c.Results.Mean))
		}
		if c.Kind == report.KindOracle {
			continue
		}
		// The run file scores as results.json says.
		run, err := eval.ReadRunFile(filepath.Join(out, c.RunFile))
		if err != nil {
			t.Fatal(err)
		}
		for qid, hits := range run {
			if len(hits) > 20 {
				t.Errorf("%s: query %s has %d hits, more than --k 20", c.Name, qid, len(hits))
			}
		}
		r, err := eval.Evaluate(qrels, run)
		if err != nil {
			t.Fatal(err)
		}
		if r.Mean["ndcg_cut_10"] != c.Results.Mean["ndcg_cut_10"] || r.Mean["cdr_1"] != c.Results.Mean["cdr_1"] {
			t.Errorf("%s: run file scores %v, results.json %v", c.Name, r.Mean["ndcg_cut_10"], c.Results.Mean["ndcg_cut_10"])
		}
	}
	// The oracle's value per query is the best of the windows'.
	o := e.Config("oracle")
	w16, w32 := e.Config("w16"), e.Config("w32")
	for qid, vals := range o.Results.PerQuery {
		for _, m := range []string{"ndcg_cut_10", "cdr_1", "recall_10"} {
			if want := max(w16.Results.PerQuery[qid][m], w32.Results.PerQuery[qid][m]); vals[m] != want {
				t.Errorf("oracle %s %s = %v, want the best window's %v", qid, m, vals[m], want)
			}
		}
	}
	if e.Oracle == nil || !slices.Equal(e.Oracle.Over, []string{"w16", "w32"}) {
		t.Fatalf("oracle: %+v", e.Oracle)
	}
	for _, m := range []string{"ndcg_cut_10", "cdr_1"} {
		sum := 0
		for _, n := range e.Oracle.BestCounts[m] {
			sum += n
		}
		if sum != 10 {
			t.Errorf("oracle best counts of %s %v add up to %d, want 10", m, e.Oracle.BestCounts[m], sum)
		}
	}
	for _, f := range []string{"report.md", "recall_at_k.png", "recall_at_k.svg", "oracle_best_window.png", "oracle_best_window.svg", "runs/metrics.json"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	if md, err := os.ReadFile(filepath.Join(out, "report.md")); err != nil || !strings.Contains(string(md), "non-semantic test embedder") {
		t.Errorf("report.md does not warn that %s is not a real model (%v)", hashembed.Name, err)
	}
	var checkable map[string]eval.Results
	if b, err := os.ReadFile(filepath.Join(out, "runs", "metrics.json")); err != nil || json.Unmarshal(b, &checkable) != nil || len(checkable) != 5 {
		t.Errorf("runs/metrics.json: %d runs, want 5 (%v)", len(checkable), err)
	}
	if !strings.Contains(stdout, "| tiny | 10 |") || !strings.Contains(stdout, "check_metrics.py --qrels "+absPath(t, filepath.Join(data, "qrels", "test.tsv"))) {
		t.Errorf("stdout lacks the summary or the check command:\n%s", stdout)
	}
	checkWithPytrecEval(t, stdout)

	// Same flags: the index is reused.
	code, _, stderr = runCLI(t, "", args...)
	if code != exitOK || !strings.Contains(stderr, "eval: reusing index") || strings.Contains(stderr, "building") {
		t.Fatalf("second run: code %d, want the index reused:\n%s", code, stderr)
	}
	if e2 := readEval(t, out); !e2.Index.Reused || e2.Timings.Build != 0 || e2.Config("rrf").Results.Mean["ndcg_cut_10"] != e.Config("rrf").Results.Mean["ndcg_cut_10"] {
		t.Errorf("second run: reused %v, build %v s, rrf nDCG@10 %v (first %v)", e2.Index.Reused, e2.Timings.Build,
			e2.Config("rrf").Results.Mean["ndcg_cut_10"], e.Config("rrf").Results.Mean["ndcg_cut_10"])
	}

	// Other windows: rebuilt.
	other := slices.Clone(args)
	other[slices.Index(other, "16,32")] = "16,24"
	code, _, stderr = runCLI(t, "", append(other, "--configs", "rrf,rrf=16+24,w24")...)
	if code != exitOK || !strings.Contains(stderr, "it has windows [full w16/16 aligned tail w32/32 aligned tail], not [full w16/16 aligned tail w24/24 aligned tail]") {
		t.Fatalf("other windows: code %d, want a rebuild for the windows:\n%s", code, stderr)
	}
	e3 := readEval(t, out)
	names = names[:0]
	for _, c := range e3.Configs {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"rrf", "rrf:windows=16+24", "w24"}) || e3.Oracle != nil {
		t.Errorf("--configs rrf,rrf=16+24,w24: configurations %v, oracle %v", names, e3.Oracle)
	}
	if a, b := e3.Config("rrf"), e3.Config("rrf:windows=16+24"); a == nil || b == nil || a.Results.Mean["ndcg_cut_10"] != b.Results.Mean["ndcg_cut_10"] {
		t.Errorf("rrf over all windows and over 16+24 (the same two) differ")
	}

	// Another corpus of the same path: rebuilt.
	f, err := os.OpenFile(filepath.Join(data, "corpus.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, `{"_id": "d30", "title": "", "text": "one more"}`)
	f.Close()
	code, _, stderr = runCLI(t, "", other...)
	if code != exitOK || !strings.Contains(stderr, "built from another corpus") {
		t.Fatalf("changed corpus: code %d, want a rebuild for the corpus:\n%s", code, stderr)
	}
	if e4 := readEval(t, out); e4.Docs != 31 {
		t.Errorf("changed corpus: %d docs, want 31", e4.Docs)
	}
}

// checkWithPytrecEval runs the check command eval printed, as printed,
// from another directory, with a python3 that has pytrec_eval
// (testfiles.PytrecEvalPython), in a subtest.
func checkWithPytrecEval(t *testing.T, stdout string) {
	t.Helper()
	i := strings.Index(stdout, "python3 /")
	if i < 0 {
		t.Fatalf("no check command in:\n%s", stdout)
	}
	line := strings.TrimSpace(strings.SplitN(stdout[i:], "\n", 2)[0])
	t.Run("check command", func(t *testing.T) {
		python := testfiles.PytrecEvalPython(t)
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(python)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	})
}

// absPath is path made absolute.
func absPath(t *testing.T, path string) string {
	t.Helper()
	a, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestEvalOfIndexBuiltByIndex checks that eval --index takes an index built
// by msrag index, whole or as shards, when the inputs its manifest records
// are the dataset's corpus, and refuses (without touching it) one whose
// corpus file differs, whose shards are incomplete, or which records no
// inputs (TestEvalIndexWithoutFull: one without the full window).
func TestEvalOfIndexBuiltByIndex(t *testing.T) {
	hashTokenizer(t)
	data := filepath.Join(t.TempDir(), "tiny")
	writeTinyDataset(t, data)
	root := t.TempDir()
	index := func(dir string, extra ...string) {
		t.Helper()
		args := append([]string{"index", "--corpus", data, "--out", dir, "--model", "hash-test-embedder", "--quiet"}, extra...)
		if code, _, stderr := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("index %v: code %d\n%s", extra, code, stderr)
		}
	}
	eval := func(ixDir string, extra ...string) (int, string, string) {
		out := filepath.Join(root, "out-"+filepath.Base(ixDir)+strings.Join(extra, ""))
		args := append([]string{"eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32", "--out", out, "--index", ixDir}, extra...)
		code, _, stderr := runCLI(t, "", args...)
		return code, stderr, out
	}
	whole := filepath.Join(root, "whole")
	index(whole, "--windows", "16,32", "--full")
	shards := filepath.Join(root, "shards")
	index(filepath.Join(shards, "s0"), "--windows", "16,32", "--full", "--shard", "0/2")
	index(filepath.Join(shards, "s1"), "--windows", "16,32", "--full", "--shard", "1/2")

	code, stderr, outWhole := eval(whole)
	if code != exitOK || !strings.Contains(stderr, "reusing index "+whole+" (built by msrag index") || strings.Contains(stderr, "building index") {
		t.Fatalf("eval of an index of msrag index: code %d, want it reused:\n%s", code, stderr)
	}
	// Without --no-lexical eval fuses the lexical windows msrag index built
	// by default: windows expands to every dense and lexical channel, the
	// hybrid is a rule like any other.
	code, stderr, outLex := eval(whole, "--configs", "windows,rrf,rrf:windows=lexical,rrf:windows=all,oracle")
	if code != exitOK || !strings.Contains(stderr, "reusing index "+whole) {
		t.Fatalf("eval of an index with lexical windows: code %d:\n%s", code, stderr)
	}
	var names []string
	for _, c := range readEval(t, outLex).Configs {
		names = append(names, c.Name)
	}
	want := []string{"w16", "w32", "bm25-w16", "bm25-w32", "bm25-doc", "rrf", "rrf:windows=lexical", "rrf:windows=all", "oracle", "oracle:dense", "oracle:lexical"}
	if !slices.Equal(names, want) {
		t.Errorf("eval configurations %v, want %v", names, want)
	}
	checkKindOracles(t, readEval(t, outLex))
	// An index built with --no-lexical serves eval --no-lexical, and is
	// refused, naming both ways out, when eval wants lexical windows.
	dense := filepath.Join(root, "dense")
	index(dense, "--windows", "16,32", "--full", "--no-lexical")
	if code, stderr, _ := eval(dense); code == exitOK || !strings.Contains(stderr, "it has no lexical channels: build it with --channel lexical, or evaluate it without them") {
		t.Errorf("eval of an index of msrag index --no-lexical: code %d, want it refused:\n%s", code, stderr)
	}
	if code, stderr, _ := eval(dense, "--no-lexical"); code != exitOK || !strings.Contains(stderr, "reusing index "+dense+" (built by msrag index") {
		t.Fatalf("eval --no-lexical of an index without lexical windows: code %d, want it reused:\n%s", code, stderr)
	}
	code, stderr, outShards := eval(shards)
	if code != exitOK || !strings.Contains(stderr, "2 shard(s)") {
		t.Fatalf("eval of the shards of msrag index: code %d, want them reused:\n%s", code, stderr)
	}
	a, b := readEval(t, outWhole), readEval(t, outShards)
	if len(a.Configs) == 0 || len(a.Configs) != len(b.Configs) {
		t.Fatalf("%d configurations over the whole index, %d over its shards", len(a.Configs), len(b.Configs))
	}
	for i := range a.Configs {
		for m, v := range a.Configs[i].Results.Mean {
			if w := b.Configs[i].Results.Mean[m]; math.Abs(v-w) > 1e-9 {
				t.Errorf("%s %s: %v over the whole index, %v over its shards", a.Configs[i].Name, m, v, w)
			}
		}
	}

	os.RemoveAll(filepath.Join(shards, "s1"))
	noRecord := filepath.Join(root, "norecord")
	index(noRecord, "--windows", "16,32", "--full")
	dropInputs(t, noRecord)
	for _, tc := range []struct {
		name, dir, manifest string
		want                []string
	}{
		{"missing shard", shards, filepath.Join(shards, "s0"), []string{"shards 1/2 are missing"}},
		{"no record", noRecord, noRecord, []string{"records no inputs", "--rebuild"}},
	} {
		before := readManifestBytes(t, tc.manifest)
		code, stderr, _ := eval(tc.dir)
		for _, w := range append(tc.want, "built by msrag index") {
			if code != exitFailure || !strings.Contains(stderr, w) {
				t.Errorf("%s: code %d, want a failure saying %q:\n%s", tc.name, code, w, stderr)
			}
		}
		if after := readManifestBytes(t, tc.manifest); after != before {
			t.Errorf("%s: the index was touched", tc.name)
		}
	}

	// The corpus changed in place, same size: the sha256 differs.
	corpusFile := filepath.Join(data, "corpus.jsonl")
	content, err := os.ReadFile(corpusFile)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(content), "alpha", "ALPHA", 1)
	if err := os.WriteFile(corpusFile, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr, _ := eval(whole); code != exitFailure || !strings.Contains(stderr, corpusFile) || !strings.Contains(stderr, "sha256") {
		t.Errorf("same size, other content: code %d, want a failure naming the file and its sha256:\n%s", code, stderr)
	}
	longer := string(content) + `{"_id": "d30", "title": "", "text": "one more"}` + "\n"
	if err := os.WriteFile(corpusFile, []byte(longer), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stderr, _ := eval(whole); code != exitFailure || !strings.Contains(stderr, "size "+fmt.Sprint(len(longer))) {
		t.Errorf("longer corpus: code %d, want a failure naming the size:\n%s", code, stderr)
	}
	code, stderr, _ = eval(whole, "--rebuild", "--configs", "rrf")
	if code != exitOK || !strings.Contains(stderr, "building index "+whole+": rebuild asked for") {
		t.Fatalf("eval --rebuild: code %d\n%s", code, stderr)
	}
}

// TestEvalIndexWithoutFull: an index msrag index built without --full is
// reused by eval with its default configurations, leaving out full (which
// needs the full window) in one line; a --configs naming full is refused
// before any query is searched, and the index is untouched. Real processes.
func TestEvalIndexWithoutFull(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	code, _, stderr := limitedRun(t, time.Minute, "index", "--corpus", data, "--out", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--quiet")
	if code != exitOK {
		t.Fatalf("index: code %d\n%s", code, stderr)
	}
	before := readManifestBytes(t, idx)
	var stdout string
	eval := func(out string, extra ...string) (int, string) {
		args := append([]string{"eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32", "--index", idx, "--out", filepath.Join(dir, out)}, extra...)
		var code int
		code, stdout, stderr = limitedRun(t, time.Minute, args...)
		return code, stderr
	}
	code, stderr = eval("default")
	// The summary's naive table compares each kind with its own RRF, and
	// the hybrid with the best single channel of either kind, labelled.
	for _, re := range []string{`\| tiny \| 10 \| dense \| w(16|32) \| [0-9.]+ \| — \| rrf \|`,
		`\| tiny \| 10 \| lexical \| bm25-(w16|w32|doc) \| [0-9.]+ \| — \| rrf:windows=lexical \|`,
		`\| tiny \| 10 \| hybrid, against the best single channel of either kind \| \S+ \| [0-9.]+ \| — \| rrf:windows=all \|`} {
		if !regexp.MustCompile(re).MatchString(stdout) {
			t.Errorf("the summary lacks a row matching %s:\n%s", re, stdout)
		}
	}
	if code != exitOK || !strings.Contains(stderr, "reusing index "+idx+" (built by msrag index") {
		t.Fatalf("eval with the default configurations: code %d, want the index reused:\n%s", code, stderr)
	}
	if n := strings.Count(stderr, "eval: leaving out full: index "+idx+" has no full window (msrag index builds it with --full)"); n != 1 {
		t.Errorf("eval said %d times that it leaves full out, want once:\n%s", n, stderr)
	}
	e := readEval(t, filepath.Join(dir, "default"))
	if e.Config("full") != nil || e.FullWindow != 0 {
		t.Errorf("configuration full evaluated on an index without the full window (full window %d)", e.FullWindow)
	}
	for _, name := range []string{"w16", "bm25-w32", "bm25-doc", "rrf", "rrf:windows=lexical", "rrf:windows=all", "maxp", "oracle", "oracle:dense", "oracle:lexical"} {
		if e.Config(name) == nil {
			t.Errorf("no configuration %s", name)
		}
	}
	if code, stderr = eval("rrf", "--configs", "rrf,oracle"); code != exitOK || strings.Contains(stderr, "leaving out") {
		t.Errorf("eval --configs rrf,oracle: code %d, want it run with nothing left out:\n%s", code, stderr)
	}
	for _, configs := range []string{"full", "rrf,full", "rrf:windows=16+full"} {
		code, stderr = eval("named", "--configs", configs)
		want := "it lacks the full window that configuration " + strings.Split(configs, ",")[len(strings.Split(configs, ","))-1] + " needs: build it with msrag index --full (and --windows 16,32)"
		if code != exitFailure || !strings.Contains(stderr, want) || strings.Contains(stderr, "searched") {
			t.Errorf("eval --configs %s: code %d, want a refusal saying %q before any search:\n%s", configs, code, want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "named")); err == nil {
		t.Error("a refused eval wrote its output directory")
	}
	if readManifestBytes(t, idx) != before {
		t.Error("the index was touched")
	}
}

// readManifestBytes returns dir's manifest.json.
func readManifestBytes(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dropInputs removes the inputs from dir's manifest, as an index built
// before they were recorded has none.
func dropInputs(t *testing.T, dir string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(readManifestBytes(t, dir)), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["inputs"]; !ok {
		t.Fatalf("%s records no inputs", dir)
	}
	delete(m, "inputs")
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEvalUsageErrors(t *testing.T) {
	for _, tc := range []struct{ name, configs, windows string }{
		{"subset outside the windows", "rrf=16+99", "16,32"},
		{"unknown configuration", "bm25", "16,32"},
		{"window outside the windows", "w64", "16,32"},
		{"no configuration", ",", "16,32"},
		{"repeated window", "rrf", "16,16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", "eval", "--dataset", t.TempDir(), "--out", t.TempDir(), "--windows", tc.windows, "--configs", tc.configs)
			if code != exitUsage {
				t.Fatalf("code %d, want %d: %s", code, exitUsage, stderr)
			}
		})
	}
}

// TestEvalEmbeddings runs eval with both embeddings from the command line and
// checks the flags' usage errors, found before any work.
func TestEvalEmbeddings(t *testing.T) {
	hashTokenizer(t)
	data, out := filepath.Join(t.TempDir(), "tiny"), t.TempDir()
	writeTinyDataset(t, data)
	base := []string{"eval", "--dataset", data, "--model", "hash-test-embedder", "--windows", "16,32", "--out", out, "--quiet"}
	code, stdout, stderr := runCLI(t, "", append(base, "--embedding", "independent,late", "--late-overlap", "40")...)
	if code != exitOK {
		t.Fatalf("code %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "late − independent") || !strings.Contains(stdout, "| rrf |") {
		t.Errorf("stdout lacks the comparison:\n%s", stdout)
	}
	for _, f := range []string{"modes.md", "modes.json", "independent/results.json", "late/results.json", "late/index/manifest.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if r := readEval(t, filepath.Join(out, "late")); r.Embedding != "late" || r.Late == nil || r.Late.Overlap != 40 {
		t.Errorf("late results.json: embedding %q, late %+v", r.Embedding, r.Late)
	}
	code, stdout, stderr = runCLI(t, "", "compare", "--json", filepath.Join(out, "cmp.json"), filepath.Join(out, "late"), filepath.Join(out, "independent", "results.json"))
	if code != exitOK || !strings.Contains(stdout, "independent − late") || !strings.Contains(stdout, "p (t-test)") || !strings.Contains(stdout, "p (randomization)") {
		t.Errorf("compare: code %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "cmp.json")); err != nil {
		t.Error(err)
	}
	if code, _, stderr = runCLI(t, "", "compare", filepath.Join(out, "late")); code != exitUsage {
		t.Errorf("compare with one run: code %d: %s", code, stderr)
	}
	for _, tc := range []struct{ name, embedding, overlap, want string }{
		{"unknown", "contextual", "0", "want independent or late"},
		{"repeated", "late,late", "0", "late is repeated"},
		{"overlap without late", "independent", "10", "--late-overlap and --late-edges are for --embedding late"},
		{"negative overlap", "late", "-3", "--late-overlap -3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", "eval", "--dataset", t.TempDir(), "--out", t.TempDir(), "--embedding", tc.embedding, "--late-overlap", tc.overlap)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("code %d, want %d saying %q: %s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

// checkKindOracles checks each oracle of a run with lexical channels against
// the per-query maximum of its kind's single channels.
func checkKindOracles(t *testing.T, e *report.Eval) {
	t.Helper()
	for _, o := range []struct{ name, channels string }{{"oracle", ""}, {"oracle:dense", report.ChannelsDense}, {"oracle:lexical", report.ChannelsLexical}} {
		oc := e.Config(o.name)
		if oc == nil || len(oc.Results.PerQuery) == 0 {
			t.Fatalf("%s missing or empty", o.name)
		}
		for qid, vals := range oc.Results.PerQuery {
			for _, m := range []string{"ndcg_cut_10", "cdr_1"} {
				best := 0.0
				for _, c := range e.Configs {
					if c.Kind == report.KindWindow && (o.channels == "" || c.Channels == o.channels) {
						best = max(best, c.Results.PerQuery[qid][m])
					}
				}
				if vals[m] != best {
					t.Errorf("%s query %s %s = %v, want the best single channel's %v", o.name, qid, m, vals[m], best)
				}
			}
		}
	}
}
