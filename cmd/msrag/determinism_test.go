package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/onnx"
)

// int8Model is the dynamically quantized model of the determinism tests.
const int8Model = "all-minilm-l6-v2-int8"

// needInt8Model skips unless int8Model and the SciFact data are present
// (under CI their absence fails).
func needInt8Model(t *testing.T) string {
	t.Helper()
	data := testfiles.DataDir("scifact")
	_, errModel := onnx.ResolveModel(int8Model)
	_, errLib := os.Stat(onnx.LibraryPath())
	_, errData := os.Stat(filepath.Join(data, "corpus.jsonl.gz"))
	for _, err := range []error{errModel, errLib, errData} {
		if err != nil {
			if testfiles.UnderCI() {
				t.Fatalf("determinism test inputs absent under CI: %v", err)
			}
			t.Skipf("determinism test inputs absent (make setup): %v", err)
		}
	}
	return data
}

// readGzipLines returns the first n lines of a gzipped file (all with n < 0).
func readGzipLines(t *testing.T, path string, n int) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && (n < 0 || len(out) < n) {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeSciFactSubset writes a BEIR dataset into dir: the first nq test
// queries that have judgements, the documents they judge and the first nd
// other documents, and those queries' qrels. It returns the query texts by id.
func writeSciFactSubset(t *testing.T, src, dir string, nq, nd int) map[string]string {
	t.Helper()
	qrels, err := os.ReadFile(filepath.Join(src, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	judged, keepQ := map[string]bool{}, map[string]bool{}
	out := []string{"query-id\tcorpus-id\tscore"}
	for _, line := range strings.Split(strings.TrimSpace(string(qrels)), "\n")[1:] {
		f := strings.Split(line, "\t")
		if !keepQ[f[0]] && len(keepQ) == nq {
			continue
		}
		keepQ[f[0]], judged[f[1]] = true, true
		out = append(out, line)
	}
	var docs []string
	for i, line := range readGzipLines(t, filepath.Join(src, "corpus.jsonl.gz"), -1) {
		var d struct {
			ID string `json:"_id"`
		}
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if i < nd || judged[d.ID] {
			docs = append(docs, line)
		}
	}
	texts := map[string]string{}
	var queries []string
	for _, line := range readGzipLines(t, filepath.Join(src, "queries.jsonl.gz"), -1) {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			t.Fatal(err)
		}
		if keepQ[q.ID] {
			queries, texts[q.ID] = append(queries, line), q.Text
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "qrels"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, lines := range map[string][]string{"corpus.jsonl": docs, "queries.jsonl": queries, "qrels/test.tsv": out} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return texts
}

// TestShardedInt8BuildSearchesLikeOne builds a SciFact subset with an int8
// model as one index and as three shards, with the default batching (single
// for a dynamically quantized model): the TREC runs must be identical, scores
// included. With padded batches they are not: each shard forms other batches.
func TestShardedInt8BuildSearchesLikeOne(t *testing.T) {
	src := needInt8Model(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	texts := writeSciFactSubset(t, src, data, 30, 60)
	var tsv strings.Builder
	for id, text := range texts {
		fmt.Fprintf(&tsv, "%s\t%s\n", id, text)
	}
	queries := filepath.Join(dir, "queries.tsv")
	if err := os.WriteFile(queries, []byte(tsv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	corpusPath := filepath.Join(data, "corpus.jsonl")
	index := func(out string, extra ...string) {
		args := append([]string{"index", "--corpus", corpusPath, "--out", out, "--model", int8Model,
			"--windows", "64,128", "--block-lines", "30", "--quiet"}, extra...)
		if code, _, stderr := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("%v: code %d: %s", args, code, stderr)
		}
	}
	one := filepath.Join(dir, "one")
	index(one)
	for i := range 3 {
		index(filepath.Join(dir, "shards", fmt.Sprint(i)), "--shard", fmt.Sprintf("%d/3", i))
	}
	search := func(idx string) string {
		code, out, stderr := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--k", "20", "--window-k", "50")
		if code != exitOK || out == "" {
			t.Fatalf("search %s: code %d: %s", idx, code, stderr)
		}
		return out
	}
	if a, b := search(one), search(filepath.Join(dir, "shards")); a != b {
		t.Fatalf("sharded int8 build ranks differently from one build:\none:\n%s\nshards:\n%s", head(a, 10), head(b, 10))
	}

	man, err := os.ReadFile(filepath.Join(one, "manifest.json"))
	if err != nil || !strings.Contains(string(man), `"batching": "single"`) {
		t.Fatalf("manifest of an int8 build does not record single batching (%v):\n%s", err, man)
	}

	// A shard built with padded batches does not mix with single ones.
	padded := filepath.Join(dir, "padded")
	index(padded, "--shard", "0/3", "--batching", "padded")
	mixed := strings.Join([]string{padded, filepath.Join(dir, "shards", "1"), filepath.Join(dir, "shards", "2")}, ",")
	code, _, stderr := runCLI(t, "", "search", "--index", mixed, "--queries", queries)
	if code == exitOK || !strings.Contains(stderr, "different batching (padded, single)") {
		t.Fatalf("padded and single shards searched together: code %d: %s", code, stderr)
	}
}

func head(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// TestEvalInt8BatchSizesAgree: with the default batching an int8 model's
// eval numbers are identical whether the queries are embedded one by one or
// all at once.
func TestEvalInt8BatchSizesAgree(t *testing.T) {
	src := needInt8Model(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "scifact-sub")
	writeSciFactSubset(t, src, data, 40, 40)
	idx := filepath.Join(dir, "index")
	var evals []any
	for _, batch := range []string{"1", "1024"} {
		out := filepath.Join(dir, "out-"+batch)
		code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--model", int8Model, "--windows", "64,128",
			"--index", idx, "--out", out, "--batch", batch)
		if code != exitOK {
			t.Fatalf("eval --batch %s: code %d: %s", batch, code, stderr)
		}
		e := readEval(t, out)
		if e.Queries != 40 {
			t.Fatalf("eval --batch %s: %d queries, want 40", batch, e.Queries)
		}
		// The run records its build, the libraries and how it batched.
		if b := e.Build; b.Module != "github.com/msrag/msrag" || b.ONNXRuntime == "" || b.FAISS == "" ||
			e.Index.Batching != "single" || e.Index.Build == nil || e.Index.Build.FAISS != b.FAISS || e.MsragVersion != b.String() {
			t.Fatalf("eval --batch %s: provenance %+v, index %+v, version %q", batch, b, e.Index, e.MsragVersion)
		}
		var res []any
		for _, c := range e.Configs {
			res = append(res, c.Name, c.Results.Mean, c.Results.PerQuery)
		}
		evals = append(evals, res)
	}
	if !reflect.DeepEqual(evals[0], evals[1]) {
		t.Fatalf("eval numbers differ between --batch 1 and --batch 1024:\n%v\n%v", evals[0], evals[1])
	}

	// The index is not reused with the other batching.
	code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--model", int8Model, "--windows", "64,128",
		"--index", idx, "--out", filepath.Join(dir, "out-padded"), "--batching", "padded")
	if code != exitOK || !strings.Contains(stderr, "embedded with single batching, the model now runs padded") {
		t.Fatalf("eval --batching padded over a single index: code %d: %s", code, stderr)
	}
}

// TestEvalInt8SessionsAgree: an int8 model's index and eval numbers are the
// same to the bit through one ONNX Runtime session of all the cores (how
// every build ran before there were several), four sessions and the default
// (one per core): the FAISS files are identical byte for byte, and so are the
// per-query results.
func TestEvalInt8SessionsAgree(t *testing.T) {
	src := needInt8Model(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "scifact-sub")
	writeSciFactSubset(t, src, data, 25, 25)
	var want []any
	var wantIndex map[string][]byte
	for _, sessions := range []string{"1", "4", "0"} {
		out := filepath.Join(dir, "out-"+sessions)
		code, _, stderr := runCLI(t, "", "eval", "--dataset", data, "--model", int8Model, "--windows", "64,128",
			"--no-lexical", "--out", out, "--sessions", sessions)
		if code != exitOK {
			t.Fatalf("eval --sessions %s: code %d: %s", sessions, code, stderr)
		}
		var res []any
		for _, c := range readEval(t, out).Configs {
			res = append(res, c.Name, c.Results.Mean, c.Results.PerQuery)
		}
		index := map[string][]byte{}
		files, _ := filepath.Glob(filepath.Join(out, "index", "*.faiss"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			index[filepath.Base(f)] = b
		}
		if len(index) != 3 {
			t.Fatalf("eval --sessions %s: FAISS files %v, want one per window and the whole documents'", sessions, files)
		}
		if want == nil {
			want, wantIndex = res, index
			continue
		}
		if !reflect.DeepEqual(index, wantIndex) {
			t.Errorf("eval --sessions %s: the FAISS files differ from one session's", sessions)
		}
		if !reflect.DeepEqual(res, want) {
			t.Errorf("eval numbers differ between --sessions 1 and %s:\n%v\n%v", sessions, want, res)
		}
	}
}
