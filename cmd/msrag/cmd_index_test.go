package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/onnx"
)

// needHashTokenizer skips when the tokenizer the hash test embedder uses has not
// been fetched, unless under CI, where setup has run and its absence is a failure.
func needHashTokenizer(t *testing.T) {
	t.Helper()
	if _, err := onnx.ResolveModel("all-minilm-l6-v2"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("all-minilm-l6-v2 not fetched under CI: %v", err)
		}
		t.Skipf("all-minilm-l6-v2 not fetched (run make setup): %v", err)
	}
}

func writeCorpus(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "corpus.jsonl")
	var b strings.Builder
	for i, text := range []string{
		"Iron deficiency is the most common cause of anaemia worldwide.",
		"Adults who sleep less than six hours a night report more headaches.",
		"Moderate coffee drinking was not linked to heart disease in the cohort.",
	} {
		line, _ := json.Marshal(map[string]string{"_id": string(rune('a' + i)), "title": "", "text": text})
		b.Write(line)
		b.WriteByte('\n')
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	return path
}

func TestIndexSearchCLI(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	queries := filepath.Join(dir, "queries.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee and heart disease\nq2\tanaemia from iron deficiency\n"), 0o644)
	idx := filepath.Join(dir, "idx")

	code, _, errOut := runCLI(t, "", "index", "--corpus", corpusPath, "--out", idx, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet", "--no-lexical")
	if code != exitOK {
		t.Fatalf("index: code %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "3 docs") {
		t.Errorf("index summary: %q", errOut)
	}

	t.Run("trec", func(t *testing.T) {
		code, out, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--k", "2")
		if code != exitOK {
			t.Fatalf("search: code %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "q1 Q0 c 1 ") || !strings.HasPrefix(lines[2], "q2 Q0 a 1 ") {
			t.Fatalf("trec output:\n%s", out)
		}
	})
	t.Run("jsonl to file", func(t *testing.T) {
		outPath := filepath.Join(dir, "hits.jsonl")
		code, _, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--k", "1", "--format", "jsonl", "--out", outPath)
		if code != exitOK {
			t.Fatalf("search: code %d: %s", code, errOut)
		}
		data, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		var line struct {
			QueryID string `json:"query_id"`
			Hits    []struct {
				DocID    string `json:"doc_id"`
				Rank     int    `json:"rank"`
				Evidence []struct {
					Window, ChunkRank int
					Start, End        int
				} `json:"evidence"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(strings.SplitN(string(data), "\n", 2)[0]), &line); err != nil {
			t.Fatal(err)
		}
		if line.QueryID != "q1" || len(line.Hits) != 1 || line.Hits[0].DocID != "c" || line.Hits[0].Rank != 1 || len(line.Hits[0].Evidence) == 0 {
			t.Fatalf("jsonl line: %+v", line)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		outPath := filepath.Join(dir, "hits.parquet")
		if code, _, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--format", "parquet", "--out", outPath); code != exitOK {
			t.Fatalf("search: code %d: %s", code, errOut)
		}
		data, _ := os.ReadFile(outPath)
		if len(data) < 8 || string(data[:4]) != "PAR1" || string(data[len(data)-4:]) != "PAR1" {
			t.Fatalf("%s is not a Parquet file", outPath)
		}
	})
	t.Run("a lexical channel of an index without lexical windows is refused plainly", func(t *testing.T) {
		code, _, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--fusion", "bm25-w4")
		if code == exitOK || !strings.Contains(errOut, "has no lexical windows") {
			t.Fatalf("bm25-w4 without lexical windows: code %d, %s", code, errOut)
		}
	})
	t.Run("lexical", func(t *testing.T) {
		lex := filepath.Join(dir, "lex")
		if code, _, errOut := runCLI(t, "", "index", "--corpus", corpusPath, "--out", lex, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
			t.Fatalf("index (lexical windows by default): code %d: %s", code, errOut)
		}
		code, out, errOut := runCLI(t, "", "search", "--index", lex, "--queries", queries, "--k", "1", "--fusion", "bm25-w4", "--format", "jsonl")
		if code != exitOK {
			t.Fatalf("search bm25-w4: code %d: %s", code, errOut)
		}
		if !strings.Contains(out, `"channel":"bm25-w4"`) || !strings.Contains(out, `"terms":["iron","defici"]`) {
			t.Fatalf("jsonl of a lexical search:\n%s", out)
		}
	})
	t.Run("a window the index lacks is a usage error, found before any output", func(t *testing.T) {
		outPath := filepath.Join(dir, "none.trec")
		code, _, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--fusion", "w=999", "--out", outPath)
		if code != exitUsage || !strings.Contains(errOut, "the index has no window w999") || strings.Count(errOut, "msrag: ") != 1 {
			t.Fatalf("unknown window: code %d, %s", code, errOut)
		}
		entries, _ := filepath.Glob(filepath.Join(dir, "*none.trec*"))
		if len(entries) != 0 {
			t.Fatalf("left %v", entries)
		}
	})
}

func TestIndexSearchUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"no corpus":                  {"index", "--out", filepath.Join(dir, "x")},
		"empty windows":              {"index", "--corpus", "c", "--out", "x", "--windows", ""},
		"zero window":                {"index", "--corpus", "c", "--out", "x", "--windows", "0,100"},
		"negative window":            {"index", "--corpus", "c", "--out", "x", "--windows", "-5"},
		"repeated window":            {"index", "--corpus", "c", "--out", "x", "--windows", "100,100"},
		"bad shard":                  {"index", "--corpus", "c", "--out", "x", "--shard", "3/3"},
		"bad device":                 {"index", "--corpus", "c", "--out", "x", "--device", "tpu"},
		"repeated gpu":               {"index", "--corpus", "c", "--out", "x", "--gpus", "0,0"},
		"bad gpus":                   {"search", "--index", "x", "--queries", "q", "--gpus", "0,x"},
		"bad format":                 {"search", "--index", "x", "--queries", "q", "--format", "xml"},
		"bad k":                      {"search", "--index", "x", "--queries", "q", "--k", "0"},
		"missing --queries":          {"search", "--index", "x"},
		"k1 with --no-lexical":       {"index", "--corpus", "c", "--out", "x", "--no-lexical", "--bm25-k1", "1.2"},
		"--lexical and --no-lexical": {"index", "--corpus", "c", "--out", "x", "--no-lexical", "--lexical"},
		"bad analyzer":               {"index", "--corpus", "c", "--out", "x", "--lexical", "--lexical-analyzer", "klingon"},
		"bad b":                      {"index", "--corpus", "c", "--out", "x", "--lexical", "--bm25-b", "1.5"},
		"negative k1":                {"index", "--corpus", "c", "--out", "x", "--lexical", "--bm25-k1", "-1"},
		"NaN k1":                     {"index", "--corpus", "c", "--out", "x", "--lexical", "--bm25-k1", "NaN"},
		"infinite b":                 {"index", "--corpus", "c", "--out", "x", "--lexical", "--bm25-b", "Inf"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", args...)
			if code != exitUsage {
				t.Fatalf("%v: code %d, want %d (stderr %q)", args, code, exitUsage, errOut)
			}
		})
	}
}

// TestIndexGPUsOnCPUBuild: --gpus asks for one embedder session per GPU; with
// the CPU-only ONNX Runtime it fails naming the session, never falls back.
func TestIndexGPUsOnCPUBuild(t *testing.T) {
	lib := onnx.LibraryPath()
	if _, err := os.Stat(filepath.Join(filepath.Dir(lib), "libonnxruntime_providers_cuda.so")); err == nil {
		t.Skip("the ONNX Runtime library has a CUDA provider")
	}
	if _, err := os.Stat(filepath.Join(onnx.ModelsDir(), "all-minilm-l6-v2-int8", onnx.ModelFile)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("model all-minilm-l6-v2-int8 not fetched under CI: %v", err)
		}
		t.Skip("model all-minilm-l6-v2-int8 not fetched (scripts/fetch-model.sh all-minilm-l6-v2-int8)")
	}
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "", "index", "--corpus", writeCorpus(t, dir), "--out", filepath.Join(dir, "idx"),
		"--model", "all-minilm-l6-v2-int8", "--windows", "4", "--gpus", "0,1", "--quiet")
	if code != exitFailure || !strings.Contains(errOut, "session 1 of 2 (device 0)") || !strings.Contains(errOut, "CPU build") {
		t.Fatalf("--gpus on a CPU build: code %d, %q", code, errOut)
	}
}

func TestIndexWithAnotherModelFails(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	idx := filepath.Join(dir, "idx")
	if code, _, errOut := runCLI(t, "", "index", "--corpus", writeCorpus(t, dir), "--out", idx, "--model", "hash-test-embedder", "--windows", "4", "--quiet"); code != exitOK {
		t.Fatalf("index: %s", errOut)
	}
	// Tamper with the recorded model: opening must refuse, naming both.
	m := filepath.Join(idx, "manifest.json")
	data, _ := os.ReadFile(m)
	os.WriteFile(m, []byte(strings.Replace(string(data), `"model_sha256": "none"`, `"model_sha256": "abc"`, 1)), 0o644)
	queries := filepath.Join(dir, "q.txt")
	os.WriteFile(queries, []byte("coffee\n"), 0o644)
	code, _, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries)
	if code != exitFailure || !strings.Contains(errOut, "abc") || !strings.Contains(errOut, idx) {
		t.Fatalf("mismatched model: code %d, %q", code, errOut)
	}
}

func TestExpectedUnits(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%d.txt", i)), []byte("some text"), 0o644)
	}
	if got := expectedUnits(dir, corpus.Options{}); got != 5 {
		t.Errorf("directory of 5 files: %d units", got)
	}
	// Shard 1 of 2 reads files 1 and 3; shard 0 reads 0, 2 and 4.
	if got := expectedUnits(dir, corpus.Options{Shard: corpus.Shard{I: 1, N: 2}}); got != 2 {
		t.Errorf("shard 1/2: %d units, want 2", got)
	}
	if got := expectedUnits(dir, corpus.Options{Shard: corpus.Shard{I: 0, N: 2}}); got != 3 {
		t.Errorf("shard 0/2: %d units, want 3", got)
	}
	if got := expectedUnits(writeCorpus(t, t.TempDir()), corpus.Options{}); got != 0 {
		t.Errorf("JSONL: %d units, want 0 (not counted)", got)
	}
}

// TestIndexLateCLI builds a late index, searches it without a flag, and
// refuses a late shard beside an independent one.
func TestIndexLateCLI(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	late, ind := filepath.Join(dir, "late"), filepath.Join(dir, "ind")
	code, _, errOut := runCLI(t, "", "index", "--corpus", corpusPath, "--out", late, "--model", "hash-test-embedder", "--windows", "4,8", "--embedding", "late", "--quiet")
	if code != exitOK || !strings.Contains(errOut, "late embedding: segments of 510 tokens sharing 127, edges segment") {
		t.Fatalf("index --embedding late: code %d: %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, "", "index", "--corpus", corpusPath, "--out", ind, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
		t.Fatalf("index: code %d: %s", code, errOut)
	}
	queries := filepath.Join(dir, "queries.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee and heart disease\n"), 0o644)
	code, out, errOut := runCLI(t, "", "search", "--index", late, "--queries", queries, "--k", "1")
	if code != exitOK || !strings.HasPrefix(out, "q1 Q0 c 1 ") {
		t.Fatalf("search of a late index: code %d: %s%s", code, out, errOut)
	}
	code, _, errOut = runCLI(t, "", "search", "--index", late+","+ind, "--queries", queries)
	if code == exitOK || !strings.Contains(errOut, "embedded differently") {
		t.Fatalf("search of a late and an independent index together: code %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "none"), "--model", "hash-test-embedder",
		"--windows", "4,8", "--embedding", "late", "--late-edges", "none", "--late-overlap", "60", "--quiet")
	if code != exitOK || !strings.Contains(errOut, "segments of 510 tokens sharing 60, edges none") {
		t.Fatalf("index --late-edges none: code %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "x"), "--embedding", "late", "--late-edges", "all")
	if code != exitUsage || !strings.Contains(errOut, "want segment or none") {
		t.Fatalf("--late-edges all: code %d: %s", code, errOut)
	}
	code, _, errOut = runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "x"), "--late-overlap", "10")
	if code != exitUsage || !strings.Contains(errOut, "--late-overlap and --late-edges are for --embedding late") {
		t.Fatalf("--late-overlap without late: code %d: %s", code, errOut)
	}
}
