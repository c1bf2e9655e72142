package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain runs the command line itself when MSRAG_TEST_MAIN is set, so the
// tests can start real msrag processes from the test binary.
func TestMain(m *testing.M) {
	if os.Getenv("MSRAG_TEST_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// msragProcess starts the command line in a process of its own.
func msragProcess(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MSRAG_TEST_MAIN=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &errb
}

// exitCode waits for cmd and returns its exit code.
func exitCode(cmd *exec.Cmd) int {
	cmd.Wait()
	return cmd.ProcessState.ExitCode()
}

// writeBigCorpus writes n documents of 300 words, so that a build takes a
// few seconds.
func writeBigCorpus(t *testing.T, dir string, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"_id": "d%d", "text": "`, i)
		for j := range 300 {
			b.WriteString(evalWords[(i*7+j*j)%len(evalWords)])
			b.WriteByte(' ')
		}
		b.WriteString("\"}\n")
	}
	path := filepath.Join(dir, "big.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitFor polls cond for up to a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestConcurrentBuildsOfOneDirectory starts real processes that build the
// same --out: while one builds, the others fail at once naming it (and leave
// its staging directory alone), or wait with --wait and then build.
func TestConcurrentBuildsOfOneDirectory(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeBigCorpus(t, dir, 3000)
	out := filepath.Join(dir, "cc")
	args := []string{"index", "--corpus", corpusPath, "--out", out, "--model", "hash-test-embedder", "--windows", "16,32,64", "--quiet"}
	a, aErr := msragProcess(t, args...)
	staging := func() []string { m, _ := filepath.Glob(filepath.Join(dir, ".cc.msrag-tmp-*")); return m }
	waitFor(t, "the first build's staging directory", func() bool { return len(staging()) == 1 })
	held := staging()[0]
	b, bErr := msragProcess(t, args...)
	c, cErr := msragProcess(t, args...)
	d, dErr := msragProcess(t, append(args, "--wait")...)
	for name, p := range map[string]struct {
		cmd *exec.Cmd
		err *bytes.Buffer
	}{"second": {b, bErr}, "third": {c, cErr}} {
		want := fmt.Sprintf("another build (pid %d, started ", a.Process.Pid)
		if code := exitCode(p.cmd); code != exitFailure || !strings.Contains(p.err.String(), want) || !strings.Contains(p.err.String(), "is writing "+out) {
			t.Errorf("%s build while the first runs: code %d, stderr %q; want a failure naming pid %d", name, code, p.err.String(), a.Process.Pid)
		}
	}
	if _, err := os.Stat(held); err != nil {
		t.Errorf("the first build's staging directory was touched by the others: %v", err)
	}
	if code := exitCode(a); code != exitOK {
		t.Fatalf("first build: code %d\n%s", code, aErr)
	}
	if code := exitCode(d); code != exitOK {
		t.Fatalf("build with --wait: code %d\n%s", code, dErr)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "big.jsonl cc" {
		t.Errorf("left beside the index: %v", names)
	}
}

// TestStaleStagingIsRemoved: a build killed mid-way leaves its staging
// directory and its lock file; the next build, finding the lock free, takes
// it and removes the leftover.
func TestStaleStagingIsRemoved(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeBigCorpus(t, dir, 2000)
	out := filepath.Join(dir, "cc")
	args := []string{"index", "--corpus", corpusPath, "--out", out, "--model", "hash-test-embedder", "--windows", "16,32", "--quiet"}
	a, _ := msragProcess(t, args...)
	waitFor(t, "the staging directory", func() bool { m, _ := filepath.Glob(filepath.Join(dir, ".cc.msrag-tmp-*")); return len(m) == 1 })
	a.Process.Kill()
	a.Wait()
	if _, err := os.Stat(filepath.Join(dir, ".cc.lock")); err != nil {
		t.Fatalf("a killed build leaves its lock file: %v", err)
	}
	if code, _, stderr := runCLI(t, "", args...); code != exitOK {
		t.Fatalf("build after a killed one: code %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the index: %v", names)
	}
}

// TestEmptyShard: more shards than corpus units is not an error; the empty
// shard searches together with the others as one index would.
func TestEmptyShard(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee and heart disease\n"), 0o644)
	var shards []string
	for i := range 3 {
		out := filepath.Join(dir, "shards", fmt.Sprint(i))
		code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", out, "--model", "hash-test-embedder", "--windows", "4,8", "--shard", fmt.Sprintf("%d/3", i), "--quiet")
		if code != exitOK {
			t.Fatalf("shard %d/3: code %d: %s", i, code, stderr)
		}
		if i > 0 && !strings.Contains(stderr, "has 1 units") || i > 0 && !strings.Contains(stderr, "will be an empty index") {
			t.Errorf("shard %d/3 does not say it is empty: %s", i, stderr)
		}
		shards = append(shards, out)
	}
	one := filepath.Join(dir, "one")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", one, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
		t.Fatalf("one index: %s", stderr)
	}
	_, a, _ := runCLI(t, "", "search", "--index", one, "--queries", queries)
	code, b, stderr := runCLI(t, "", "search", "--index", filepath.Join(dir, "shards"), "--queries", queries)
	if code != exitOK || a != b || a == "" {
		t.Errorf("search over the shards (one of them empty): code %d, %q; one index: %q (%s)", code, b, a, stderr)
	}
}

// TestUsageErrorsComeFirst: flags that contradict the index or the model are
// usage errors (exit 2), found before queries are read or documents embedded.
func TestUsageErrorsComeFirst(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", idx, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
		t.Fatal(stderr)
	}
	missing := filepath.Join(dir, "no-such-queries.jsonl")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "--index", idx, "--queries", missing, "--fusion", "bogus"}, "unknown rule"},
		{[]string{"search", "--index", idx, "--queries", missing, "--fusion", "w=300"}, "the index has no window w300"},
		{[]string{"search", "--index", idx, "--queries", missing, "--fusion", "rrf:weights=300:2"}, "weight for window w300"},
		{[]string{"search", "--index", idx, "--queries", missing, "--format", "xml"}, "want trec, jsonl or parquet"},
		{[]string{"index", "--corpus", corpusPath, "--out", filepath.Join(dir, "x"), "--model", "hash-test-embedder", "--windows", "600"}, "exceeds the model's maximum of 512 tokens"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, missing) || strings.Count(stderr, "msrag: ") != 1 {
			t.Errorf("%v: code %d, stderr %q; want exit 2 with %q, one msrag: prefix, before the queries are read", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused index was written")
	}
}
