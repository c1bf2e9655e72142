package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/report"
)

// runProcess runs the command line in a process of its own and fails the
// test unless it exits 0.
func runProcess(t *testing.T, args ...string) {
	t.Helper()
	cmd, errb := msragProcess(t, args...)
	if code := exitCode(cmd); code != exitOK {
		t.Fatalf("msrag %s: exit %d: %s", strings.Join(args, " "), code, errb)
	}
}

// shardedTiny builds the tiny dataset as n shards (msrag index --shard) and
// returns the dataset and the directory of shards.
func shardedTiny(t *testing.T, n int, extra ...string) (data, shards string) {
	t.Helper()
	dir := t.TempDir()
	data, shards = filepath.Join(dir, "tiny"), filepath.Join(dir, "shards")
	writeTinyDataset(t, data)
	for i := range n {
		args := append([]string{"index", "--corpus", data, "--out", filepath.Join(shards, fmt.Sprintf("shard-%d", i)), "--shard", fmt.Sprintf("%d/%d", i, n),
			"--block-lines", "4", "--model", "hash-test-embedder", "--windows", "16,32", "--full", "--quiet"}, extra...)
		if code, _, stderr := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("index shard %d: exit %d: %s", i, code, stderr)
		}
	}
	return data, shards
}

// phases runs the statistics and scatter tasks of every shard and the
// gather, each a process of its own, all with args.
func phases(t *testing.T, n int, work string, args ...string) {
	t.Helper()
	for _, p := range []string{"stats", "scatter"} {
		for i := range n {
			runProcess(t, append(append([]string{}, args...), "--phase", p, "--work", work, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		}
	}
	runProcess(t, append(append([]string{}, args...), "--phase", "gather", "--work", work)...)
}

// TestSearchPhasesAsOneProcess checks that msrag search's three phases, each
// task a process, write byte for byte the run one process writes over the
// same shards: dense, lexical, the default hybrid (TREC), a fusion model
// from msrag tune, and evidence with lexical terms (jsonl).
func TestSearchPhasesAsOneProcess(t *testing.T) {
	hashTokenizer(t)
	const n = 3
	data, shards := shardedTiny(t, n)
	dir := t.TempDir()
	model := filepath.Join(dir, "fusion.json")
	if code, _, stderr := runCLI(t, "", "tune", "--dataset", data, "--split", "test", "--index", shards, "--out", model, "--folds", "2", "--quiet"); code != exitOK {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	for i, tc := range [][]string{
		{"--fusion", "rrf"},
		{"--fusion", "rrf:windows=lexical"},
		{},
		{"--fusion-model", model, "--fusion", "learned+router"},
		{"--fusion", "rrf:windows=all", "--format", "jsonl"},
	} {
		common := append([]string{"search", "--index", shards, "--queries", data, "--k", "10", "--window-k", "12", "--batch", "4", "--quiet"}, tc...)
		one, gathered := filepath.Join(dir, fmt.Sprintf("one-%d", i)), filepath.Join(dir, fmt.Sprintf("gathered-%d", i))
		if code, _, stderr := runCLI(t, "", append(append([]string{}, common...), "--out", one)...); code != exitOK {
			t.Fatalf("%v: one process: exit %d: %s", tc, code, stderr)
		}
		phases(t, n, filepath.Join(dir, fmt.Sprintf("work-%d", i)), append(common, "--out", gathered)...)
		a, _ := os.ReadFile(one)
		b, err := os.ReadFile(gathered)
		if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Fatalf("%v: the gathered run differs from one process's (%d and %d bytes): %v", tc, len(b), len(a), err)
		}
		if strings.Contains(strings.Join(tc, " "), "jsonl") && !strings.Contains(string(a), `"terms"`) {
			t.Errorf("jsonl evidence without terms")
		}
	}
}

// TestEvalPhasesAsOneProcess checks that msrag eval through the three
// phases writes the numbers msrag eval writes over the same shards in one
// process.
func TestEvalPhasesAsOneProcess(t *testing.T) {
	hashTokenizer(t)
	const n = 2
	data, shards := shardedTiny(t, n)
	dir := t.TempDir()
	common := []string{"eval", "--dataset", data, "--index", shards, "--model", "hash-test-embedder", "--windows", "16,32", "--k", "20", "--window-k", "20", "--batch", "3", "--quiet"}
	one, gathered := filepath.Join(dir, "one"), filepath.Join(dir, "gathered")
	if code, _, stderr := runCLI(t, "", append(append([]string{}, common...), "--out", one)...); code != exitOK {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	phases(t, n, filepath.Join(dir, "work"), append(common, "--out", gathered)...)
	a, b := readEval(t, one), readEval(t, gathered)
	if len(a.Configs) == 0 || len(a.Configs) != len(b.Configs) {
		t.Fatalf("configurations %d and %d", len(a.Configs), len(b.Configs))
	}
	for _, c := range a.Configs {
		g := b.Config(c.Name)
		if g == nil || !sameScores(c, *g) {
			t.Errorf("configuration %s: gathered %+v, one process %+v", c.Name, g, c)
		}
	}
}

// sameScores compares every mean and per-query score of two results.
func sameScores(a, b report.Config) bool {
	ja, _ := json.Marshal(a.Results)
	jb, _ := json.Marshal(b.Results)
	return bytes.Equal(ja, jb)
}

// TestSearchPhaseStatisticsChanged checks that a statistics file changed
// between the phases (one digit of a document count, still valid JSON)
// fails the scatter and the gather with the file named, exit 1, and no run
// written.
func TestSearchPhaseStatisticsChanged(t *testing.T) {
	hashTokenizer(t)
	const n = 2
	data, shards := shardedTiny(t, n)
	dir := t.TempDir()
	work, out := filepath.Join(dir, "work"), filepath.Join(dir, "run.trec")
	common := []string{"search", "--index", shards, "--queries", data, "--k", "10", "--window-k", "12", "--quiet", "--out", out, "--work", work}
	task := func(phase string, i int) []string {
		args := append(append([]string{}, common...), "--phase", phase)
		if phase != "gather" {
			args = append(args, "--shard", fmt.Sprintf("%d/%d", i, n))
		}
		return args
	}
	for i := range n {
		if code, _, stderr := runCLI(t, "", task("stats", i)...); code != exitOK {
			t.Fatalf("stats %d: exit %d: %s", i, code, stderr)
		}
	}
	paths, _ := filepath.Glob(filepath.Join(work, "stats", "00000*"))
	changed := ""
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		if c := regexp.MustCompile(`"Docs": ?`).ReplaceAllString(string(b), `"Docs":9`); c != string(b) {
			if !json.Valid([]byte(c)) {
				t.Fatalf("%s changed is not JSON", p)
			}
			os.WriteFile(p, []byte(c), 0o644)
			changed = p
		}
	}
	if changed == "" {
		t.Fatalf("no statistics file of shard 0 in %v holds a document count", paths)
	}
	for i := range n {
		if code, _, stderr := runCLI(t, "", task("scatter", i)...); code != exitFailure || !strings.Contains(stderr, changed) {
			t.Errorf("scatter %d after %s changed: exit %d: %s", i, changed, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "", task("gather", 0)...); code != exitFailure {
		t.Errorf("gather: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a run was written: %v", err)
	}
}

// TestScatterRerunBesideItself runs two identical scatter tasks at once
// (a rerun of a task while it still runs, as a scheduler may start one):
// both succeed, and the gather writes the run one process writes. Before,
// the second task's start removed the first one's temporary lists file,
// whose rename then failed ("rename .../lists/.00001.arrow.tmp-...: no such
// file or directory"). The second task is started once the first one's
// temporary file is there.
func TestScatterRerunBesideItself(t *testing.T) {
	hashTokenizer(t)
	const n = 3
	_, shards := shardedTiny(t, n)
	dir := t.TempDir()
	var q strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&q, "q%d\t%s %s %s\n", i, evalWords[i%len(evalWords)], evalWords[(i/7)%len(evalWords)], evalWords[(i/3)%len(evalWords)])
	}
	queries := filepath.Join(dir, "q.tsv")
	if err := os.WriteFile(queries, []byte(q.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	work, gathered, one := filepath.Join(dir, "work"), filepath.Join(dir, "gathered"), filepath.Join(dir, "one")
	common := []string{"search", "--index", shards, "--queries", queries, "--k", "10", "--window-k", "12", "--batch", "64", "--fusion", "rrf:windows=all", "--quiet"}
	if code, _, stderr := runCLI(t, "", append(append([]string{}, common...), "--out", one)...); code != exitOK {
		t.Fatalf("one process: exit %d: %s", code, stderr)
	}
	task := func(p string, i int) []string {
		return append(append([]string{}, common...), "--out", gathered, "--phase", p, "--work", work, "--shard", fmt.Sprintf("%d/%d", i, n))
	}
	for i := range n {
		runProcess(t, task("stats", i)...)
	}
	temps := filepath.Join(work, "lists", ".00001.arrow.tmp-*")
	overlapped := 0
	for round := 0; round < 10 && overlapped < 3; round++ {
		a, aerr := msragProcess(t, task("scatter", 1)...)
		done := make(chan int, 1)
		go func() { done <- exitCode(a) }()
		var b *exec.Cmd
		var berr *bytes.Buffer
		for b == nil {
			if m, _ := filepath.Glob(temps); len(m) > 0 {
				b, berr = msragProcess(t, task("scatter", 1)...)
				overlapped++
				break
			}
			select {
			case code := <-done:
				done <- code
			default:
				time.Sleep(time.Millisecond)
				continue
			}
			break
		}
		if code := <-done; code != exitOK {
			t.Fatalf("round %d: the first task: exit %d: %s", round, code, aerr)
		}
		if b != nil {
			if code := exitCode(b); code != exitOK {
				t.Fatalf("round %d: the second task, beside the first: exit %d: %s", round, code, berr)
			}
		}
	}
	if overlapped == 0 {
		t.Skip("no round had the second task start while the first wrote its lists (this machine is too fast for the check)")
	}
	for _, i := range []int{0, 2} {
		runProcess(t, task("scatter", i)...)
	}
	runProcess(t, append(append([]string{}, common...), "--out", gathered, "--phase", "gather", "--work", work)...)
	a, _ := os.ReadFile(one)
	b, err := os.ReadFile(gathered)
	if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the gathered run differs from one process's (%d and %d bytes): %v", len(b), len(a), err)
	}
	if left, _ := filepath.Glob(filepath.Join(work, "lists", ".*")); len(left) > 0 {
		t.Errorf("left in the work directory: %v", left)
	}
	t.Logf("%d rounds with the two tasks at once", overlapped)
}
