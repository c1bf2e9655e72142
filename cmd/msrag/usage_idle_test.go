package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
)

// TestUsageFlagsThatDoNothing runs command lines whose device or fusion
// flags would do nothing, or read a valid name as unknown: each exits 2
// before any work with one line naming the flag and why, and writes
// nothing. The searches run on an index without a model (no embedder, no
// FAISS index) and on one of the hash test embedder.
func TestUsageFlagsThatDoNothing(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	tok := testfiles.BERTUncased(t, dir)
	corpus := writeCorpus(t, dir)
	queries := filepath.Join(dir, "q.txt")
	os.WriteFile(queries, []byte("iron anaemia\ncoffee\n"), 0o644)
	lex, hash := filepath.Join(dir, "lex"), filepath.Join(dir, "hash")
	for _, args := range [][]string{
		{"index", "--corpus", corpus, "--out", lex, "--model", "none", "--tokenizer", tok, "--windows", "16", "--quiet"},
		{"index", "--corpus", corpus, "--out", hash, "--model", "hash-test-embedder", "--windows", "16", "--quiet"},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	out, work := filepath.Join(dir, "out"), filepath.Join(dir, "work")
	index := []string{"index", "--corpus", corpus, "--out", out, "--quiet"}
	search := func(ix string, more ...string) []string {
		return append([]string{"search", "--index", ix, "--queries", queries, "--out", out}, more...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(index, "--gpus", ""), "--gpus is empty"},
		{search(hash, "--gpus", " "), "--gpus is empty"},
		{append(index, "--gpus", "0", "--device", "cpu"), "index: --gpus 0 with --device cpu: the model runs on the CPU"},
		{append(index, "--device-id", "3", "--device", "cpu"), "index: --device-id 3 with --device cpu"},
		{append(index, "--device-id", "3", "--gpus", "0,1"), "index: --device-id 3 with --gpus 0,1: the GPUs name the devices"},
		{search(hash, "--device-id", "2", "--gpus", "0"), "search: --device-id 2 with --gpus 0: the GPUs name the devices"},
		{append(index, "--model", "hash-test-embedder", "--gpus", "0"), "index: --gpus 0: model hash-test-embedder: embedder kind hash runs on no device"},
		{append(index, "--model", "hash-test-embedder", "--device", "cuda"), "index: --device cuda: model hash-test-embedder: embedder kind hash runs on no device"},
		{append(index, "--model", "hash-test-embedder", "--device-id", "1", "--device", "auto"), "index: --device-id 1: model hash-test-embedder"},
		{append(index, "--model", "openai:http://127.0.0.1:9/v1", "--tokenizer", tok, "--device", "cuda"), "embedder kind openai runs on no device"},
		{append(index, "--model", "none", "--tokenizer", tok, "--gpus", "0"), "index: --gpus 0 needs a model, and --model none has none"},
		{append(index, "--model", "none", "--tokenizer", tok, "--device", "cuda"), "index: --device cuda needs a model"},
		// eval's device flags place FAISS too: --device cuda with the hash
		// embedder is refused by the build's FAISS (TestFAISSGPUFlagsBeforeWork).
		{[]string{"eval", "--dataset", dir, "--out", out, "--model", "hash-test-embedder", "--device-id", "3", "--device", "cpu"}, "eval: --device-id 3 with --device cpu"},
		{[]string{"eval", "--dataset", dir, "--out", out, "--model", "none", "--tokenizer", tok, "--gpus", "1"}, "eval: --gpus 1 needs a model"},
		{[]string{"embed", "--out", out, "--device-id", "3", "--device", "cpu"}, "embed: --device-id 3 with --device cpu"},
		{search(lex, "--device", "cuda"), "search: --device cuda: index " + lex + " was built with --model none"},
		{search(lex, "--gpus", "0"), "search: --gpus 0: index " + lex + " was built with --model none"},
		{search(lex, "--device-id", "3", "--device", "cpu"), "search: --device-id 3: index " + lex},
		{search(hash, "--device-id", "3", "--device", "cpu"), "search: --device-id 3 with --device cpu"},
		{search(lex, "--phase", "stats", "--work", work, "--shard", "0/1", "--device", "cuda"), "search: --device cuda: index " + lex + " was built with --model none"},
		{search(lex, "--phase", "scatter", "--work", work, "--shard", "0/1", "--gpus", "0"), "search: --gpus 0: index " + lex},
		{search(lex, "--fusion", "transfer:windows=64"), `--fusion: tune: fusion "transfer:windows=64": the built-in fusion transfer takes no parameters`},
		{search(lex, "--fusion", "TRANSFER"), "built-in fusion transfer serves indices with the channels"},
		{search(hash, "--fusion-model", "Transfer"), "built-in fusion transfer serves indices with the channels"},
		{search(hash, "--fusion-model", "transfer:c=60"), "--fusion-model: tune: fusion \"transfer:c=60\": the built-in fusion transfer takes no parameters"},
		{[]string{"eval", "--dataset", dir, "--out", out, "--model", "hash-test-embedder", "--fusion-model", "transfer:windows=64"}, "eval: --fusion-model: tune: fusion \"transfer:windows=64\": the built-in fusion transfer takes no parameters"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q: want exit 2 and one line with %q", code, stdout, stderr, tc.want)
			}
			for _, p := range []string{out, work} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}

// TestUsageDeviceFlagsThatDoSomething checks the device flags that the
// refusals above leave alone: --device auto (CUDA only if it can be had),
// and --device cpu on an index of the hash test embedder, where the flags
// place the FAISS indices only. The statistics phase searches no FAISS
// index: there --device cuda does nothing and is refused
// (TestFlagsActOrAreRefused).
func TestUsageDeviceFlagsThatDoSomething(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	corpus := writeCorpus(t, dir)
	queries := filepath.Join(dir, "q.txt")
	os.WriteFile(queries, []byte("iron anaemia\ncoffee\n"), 0o644)
	hash := filepath.Join(dir, "hash")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpus, "--out", hash, "--model", "hash-test-embedder", "--windows", "16", "--device", "auto", "--quiet"); code != exitOK {
		t.Fatalf("index --device auto: exit %d: %s", code, stderr)
	}
	work := filepath.Join(dir, "work")
	for _, args := range [][]string{
		{"search", "--index", hash, "--queries", queries, "--device", "cpu"},
		{"search", "--index", hash, "--queries", queries, "--phase", "stats", "--work", work, "--shard", "0/1", "--device", "cpu"},
	} {
		if code, stdout, stderr := runCLI(t, "", args...); code != exitOK || stdout == "" && args[5] != "--phase" {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
