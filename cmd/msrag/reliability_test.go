package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/hub"
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

// limitedRun runs msrag in a process of its own and kills it after limit: a
// crash or a hang is a test failure, not a stuck test binary.
func limitedRun(t *testing.T, limit time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MSRAG_TEST_MAIN=1")
	var outb, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running after %v (killed)\n%s", args, limit, errb.String())
	}
	return cmd.ProcessState.ExitCode(), outb.String(), errb.String()
}

// dirNames lists dir's entries.
func dirNames(dir string) string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// hostileCase is one hostile input to a real msrag process: its exit code,
// a piece of its message, and what its directory must hold afterwards.
type hostileCase struct {
	name  string
	args  []string
	code  int
	want  string
	after string // the directory's entries afterwards ("-": none; "" skips the check)
}

func runHostile(t *testing.T, dir string, cases []hostileCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := limitedRun(t, 2*time.Minute, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("code %d, stderr %q; want exit %d with %q", code, stderr, tc.code, tc.want)
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "SIG") {
				t.Errorf("a crash: %s", stderr)
			}
			if got := dirNames(dir); tc.after != "" && got != strings.TrimPrefix(tc.after, "-") {
				t.Errorf("left in %s: %q, want %q", dir, got, tc.after)
			}
		})
	}
}

// TestHostileIndexInput: FAISS factory strings FAISS crashes, aborts or
// hangs on, a symlinked lock, ids that would corrupt a run, an empty --out:
// each is refused with a message, nothing is left, nothing is overwritten.
func TestHostileIndexInput(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	out := filepath.Join(dir, "idx")
	index := func(extra ...string) []string {
		return append([]string{"index", "--corpus", corpusPath, "--out", out, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"}, extra...)
	}
	badIDs := filepath.Join(dir, "ids.jsonl")
	os.WriteFile(badIDs, []byte(`{"_id": "a", "text": "one"}`+"\n"+`{"_id": "b\nc", "text": "two"}`+"\n"), 0o644)
	const left = "corpus.jsonl ids.jsonl"
	var cases []hostileCase
	for _, f := range []struct{ factory, want string }{
		{"HNSW0", "HNSW degree 0"}, {"HNSW1", "HNSW degree 1"}, {"IVF0,Flat", "IVF lists 0"},
		{"IVF1,PQ0", "PQ sub-quantizers 0"}, {"OPQ0,PQ8", "OPQ sub-quantizers 0"}, {"NSG0", "NSG is not supported"},
		{"NSG32", "NSG is not supported"}, {"PQ7", "7 sub-quantizers do not divide the dimension 64 (the model's vectors have 64 dims)"},
	} {
		cases = append(cases, hostileCase{"factory " + f.factory, index("--factory", f.factory), exitUsage, f.want, left})
	}
	cases = append(cases,
		hostileCase{"empty out", []string{"index", "--corpus", corpusPath, "--out", "", "--model", "hash-test-embedder"}, exitUsage, "--out is empty", left},
		hostileCase{"a billion workers", index("--workers", "1000000000"), exitUsage, "--workers 1000000000 is more than 1024", left},
		hostileCase{"negative block lines", index("--block-lines", "-5"), exitUsage, "--block-lines -5: must not be negative", left},
		// k1 Inf built the whole index and failed writing the manifest;
		// 1e300 built one that scores every document 0.
		hostileCase{"k1 Inf", index("--bm25-k1", "Inf"), exitUsage, "--bm25-k1 +Inf: want a number from 0 to 3", left},
		hostileCase{"k1 1e300", index("--bm25-k1", "1e300"), exitUsage, "--bm25-k1 1e+300: want a number from 0 to 3", left},
		hostileCase{"k1 NaN", index("--bm25-k1", "NaN"), exitUsage, "--bm25-k1 NaN: want a number from 0 to 3", left},
		hostileCase{"b NaN", index("--bm25-b", "NaN"), exitUsage, "--bm25-b NaN: want a number from 0 to 1", left},
		hostileCase{"b -Inf", index("--bm25-b", "-Inf"), exitUsage, "--bm25-b -Inf: want a number from 0 to 1", left},
		hostileCase{"id with a newline", []string{"index", "--corpus", badIDs, "--out", out, "--model", "hash-test-embedder", "--windows", "4", "--quiet"},
			exitFailure, `ids.jsonl line 2: id "b\nc" holds U+000A`, left},
	)
	runHostile(t, dir, cases)

	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	os.Symlink(victim, filepath.Join(dir, ".idx.lock"))
	runHostile(t, dir, []hostileCase{{"symlinked lock", index(), exitFailure, "opening the lock " + filepath.Join(dir, ".idx.lock") + ": not a regular file", ".idx.lock " + left + " victim"}})
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Errorf("the lock's link target was overwritten: %q", b)
	}
}

// TestHostileSearchInput: a damaged fusion model (which panicked at query
// time with --fusion learned+router), sizes far beyond the index, ids and
// tags that would corrupt the run, an empty --out.
func TestHostileSearchInput(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", idx, "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
		t.Fatal(stderr)
	}
	man, err := msrag.ReadManifest(idx)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee and heart disease\n"), 0o644)
	emptyLine := filepath.Join(dir, "blank.tsv")
	os.WriteFile(emptyLine, []byte("q1\tcoffee\n\nq2\tsleep\n"), 0o644)
	badQueries := filepath.Join(dir, "bad.tsv")
	os.WriteFile(badQueries, []byte("q1\tcoffee\nq 2\tsleep\n"), 0o644)
	inputs := man.Model.Dims + 2*4
	fusionModel := func(name string, edit func(r map[string]any)) string {
		r := map[string]any{"windows": []string{"w4", "w8"}, "inputs": inputs, "mean": make([]float64, inputs),
			"std": slices.Repeat([]float64{1}, inputs), "w": make([]float64, (inputs+1)*2), "lambda": 0.1}
		edit(r)
		m := map[string]any{"format": 1, "model": man.Model, "rule": "rrf", "router": r,
			"windows":  []map[string]any{{"name": "w4", "size": 4, "tail": man.Windows[0].Tail}, {"name": "w8", "size": 8, "tail": man.Windows[1].Tail}},
			"training": map[string]any{"query_ids": []string{"t1"}}}
		data, _ := json.Marshal(m)
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		return path
	}
	good := fusionModel("good.json", func(map[string]any) {})
	otherRule := filepath.Join(dir, "f5.json")
	{
		m := map[string]any{"format": 1, "model": man.Model, "rule": "rrf:windows=4+16",
			"windows":  []map[string]any{{"name": "w4", "size": 4, "tail": man.Windows[0].Tail}, {"name": "w8", "size": 8, "tail": man.Windows[1].Tail}},
			"training": map[string]any{"query_ids": []string{"t1"}}}
		data, _ := json.Marshal(m)
		os.WriteFile(otherRule, data, 0o644)
	}
	out := filepath.Join(work, "run.trec")
	search := func(extra ...string) []string {
		return append([]string{"search", "--index", idx, "--queries", queries, "--out", out}, extra...)
	}
	cases := []hostileCase{
		{"router inputs 0", search("--fusion-model", fusionModel("f0.json", func(r map[string]any) { r["inputs"] = 0 }), "--fusion", "learned+router"),
			exitUsage, "f0.json: router: invalid model: inputs: 0", "-"},
		{"router mean short", search("--fusion-model", fusionModel("f1.json", func(r map[string]any) { r["mean"] = []float64{1} }), "--fusion", "learned+router"),
			exitUsage, "mean: 1 values for", "-"},
		{"router w long", search("--fusion-model", fusionModel("f2.json", func(r map[string]any) { r["w"] = make([]float64, (inputs+1)*2+1) }), "--fusion", "learned+router"),
			exitUsage, "router: invalid model: w:", "-"},
		{"router of 3 windows", search("--fusion-model", fusionModel("f3.json", func(r map[string]any) { r["windows"] = []string{"w4", "w8", "full"} }), "--fusion", "learned+router"),
			exitUsage, "f3.json: router:", "-"},
		{"router std 0", search("--fusion-model", fusionModel("f4.json", func(r map[string]any) { r["std"] = make([]float64, inputs) }), "--fusion", "learned+router"),
			exitUsage, "std[0]: 0, want a positive value", "-"},
		// Said "the index has no window w16 (it has w4, w8)": the fusion model's windows, not the index's.
		{"rule of a window the model lacks", search("--fusion-model", otherRule), exitUsage,
			`f5.json: rule "rrf:windows=4+16" fuses or weighs channel w16, which the fusion model's windows (w4, w8) do not list`, "-"},
		{"empty out", []string{"search", "--index", idx, "--queries", queries, "--out", ""}, exitUsage, "--out is empty", "-"},
		{"fusion model /dev/zero", search("--fusion-model", "/dev/zero"), exitUsage, "/dev/zero: not a regular file of a size msrag reads whole", "-"},
		{"tag with a space", search("--tag", "my run"), exitUsage, `--tag: id "my run" holds U+0020`, "-"},
		{"query id with a space", []string{"search", "--index", idx, "--queries", badQueries, "--out", out}, exitFailure, `bad.tsv line 2: id "q 2" holds U+0020`, "-"},
		// Was "corpus: blank.tsv line 2: empty line", read as a corpus file.
		{"empty query line", []string{"search", "--index", idx, "--queries", emptyLine, "--out", out}, exitFailure, "msrag: corpus: queries file " + emptyLine + " line 2: empty line", "-"},
	}
	runHostile(t, work, cases)
	code, _, stderr := limitedRun(t, time.Minute, search("--fusion-model", good, "--fusion", "learned+router")...)
	if code != exitOK {
		t.Fatalf("the valid fusion model: code %d: %s", code, stderr)
	}
	// Sizes far beyond the index: clamped to it, said once, and answered.
	code, _, stderr = limitedRun(t, time.Minute, search("--k", "1000000000000", "--window-k", "1000000000")...)
	if code != exitOK || strings.Count(stderr, "more than the index's 3 documents") != 1 || strings.Count(stderr, "--window-k 1000000000 is more than any window's") != 1 {
		t.Fatalf("huge k: code %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(out); strings.Count(string(b), "\n") != 3 {
		t.Errorf("huge k: want the 3 documents, got %q", b)
	}
}

// TestHostileDataFetch: a hub that accepts connections and never answers
// fails the fetch within --request-timeout, given before or after the name;
// a directory of other files is not replaced.
func TestHostileDataFetch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := ln.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	t.Setenv(hub.EnvEndpoint, "http://"+ln.Addr().String())
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ref, _ := hub.ParseDatasetName("hf:mteb/tiny@main")
	other := filepath.Join(dir, "other")
	os.MkdirAll(filepath.Join(other, ref.DirName()), 0o755)
	os.WriteFile(filepath.Join(other, ref.DirName(), "mine.txt"), []byte("mine\n"), 0o644)
	runHostile(t, dir, []hostileCase{
		{"no answer", []string{"data", "fetch", "--dir", data, "--quiet", "--request-timeout", "500ms", "hf:mteb/tiny@main"},
			exitFailure, "nothing received for 500ms", "other"},
		{"flags after a name", []string{"data", "fetch", "--dir", data, "hf:mteb/tiny@main", "--quiet", "--request-timeout", "500ms"},
			exitFailure, "nothing received for 500ms", "other"},
		{"a directory of other files", []string{"data", "fetch", "--dir", other, "hf:mteb/tiny@main"}, exitFailure, "not replacing them", "other"},
	})
	if b, _ := os.ReadFile(filepath.Join(other, ref.DirName(), "mine.txt")); string(b) != "mine\n" {
		t.Error("the directory of other files was touched")
	}
}

// TestHostileEvalInput: an eval refused for its fusion model (trained on the
// queries it would score) or an empty --out leaves nothing in OUT.
func TestHostileEvalInput(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	eval := func(extra ...string) []string {
		return append([]string{"eval", "--dataset", data, "--index", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--k", "10", "--window-k", "10"}, extra...)
	}
	if code, _, stderr := runCLI(t, "", eval("--out", filepath.Join(dir, "first"))...); code != exitOK {
		t.Fatal(stderr)
	} else if !regexp.MustCompile(`eval: built .* [0-9]+ tokens/s \(embedder busy [0-9]+%\)`).MatchString(stderr) {
		t.Errorf("eval's build line gives no tokens/s: %s", stderr)
	}
	man, err := msrag.ReadManifest(idx)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"format": 1, "model": man.Model, "rule": "rrf",
		"windows":  []map[string]any{{"name": "w16", "size": 16, "tail": man.Windows[0].Tail}, {"name": "w32", "size": 32, "tail": man.Windows[1].Tail}},
		"training": map[string]any{"dataset": "tiny", "split": "test", "query_ids": []string{"q1"}}}
	b, _ := json.Marshal(m)
	seen := filepath.Join(dir, "seen.json")
	os.WriteFile(seen, b, 0o644)
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	out := filepath.Join(work, "out")
	runHostile(t, work, []hostileCase{
		{"fusion model trained on these queries", eval("--out", out, "--fusion-model", seen), exitFailure, "evaluate it on queries it has not seen", "-"},
		{"empty out", eval("--out", ""), exitUsage, "--out is empty", "-"},
		{"k1 Inf", eval("--out", out, "--bm25-k1", "Inf"), exitUsage, "eval: --bm25-k1 +Inf: want a number from 0 to 3", "-"},
		{"k1 4", eval("--out", out, "--bm25-k1", "4"), exitUsage, "eval: --bm25-k1 4: want a number from 0 to 3", "-"},
	})
}

// TestHostileBenchInput: an empty --out or --indices, a billion workers and
// a suite file that is a device are usage errors before any work.
func TestHostileBenchInput(t *testing.T) {
	dir := t.TempDir()
	suiteFile := filepath.Join(dir, "s.json")
	os.WriteFile(suiteFile, []byte(`{"name": "s", "out": "out", "datasets": [{"dir": "d"}], "models": [{"name": "m", "window_sets": [[4]]}]}`), 0o644)
	runHostile(t, dir, []hostileCase{
		{"empty out", []string{"bench", "--suite", suiteFile, "--out", ""}, exitUsage, "bench: --out is empty", "s.json"},
		{"empty indices", []string{"bench", "--suite", suiteFile, "--indices", ""}, exitUsage, "bench: --indices is empty", "s.json"},
		{"a billion workers", []string{"bench", "--suite", suiteFile, "--workers", "1000000000"}, exitUsage, "--workers 1000000000 is more than 1024", "s.json"},
		{"suite /dev/zero", []string{"bench", "--suite", "/dev/zero"}, exitUsage, "/dev/zero: not a regular file of a size msrag reads whole (it is a device)", "s.json"},
	})
}

// TestFlagsThatDoNothing: a flag that would be accepted and ignored is a
// usage error, found before any document is read or query searched:
// --cv-group without --cv-folds or grouping nothing (checked once the
// queries are read), the server flags with a model that runs in this
// process or with no model.
func TestFlagsThatDoNothing(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	code, _, stderr := limitedRun(t, time.Minute, "index", "--corpus", data, "--out", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--quiet")
	if code != exitOK {
		t.Fatal(stderr)
	}
	// The closing line gives the rate, to compare with docs/setup.md's runs.
	if !regexp.MustCompile(`index: wrote .* [0-9]+ tokens/s \(embedder busy [0-9]+%\)`).MatchString(stderr) {
		t.Errorf("index's closing line gives no tokens/s: %s", stderr)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	out := filepath.Join(work, "out")
	eval := func(extra ...string) []string {
		return append([]string{"eval", "--dataset", data, "--index", idx, "--model", "hash-test-embedder", "--windows", "16,32", "--out", out, "--quiet"}, extra...)
	}
	queries := filepath.Join(data, "queries.jsonl")
	suiteFile := filepath.Join(dir, "s.json")
	os.WriteFile(suiteFile, []byte(`{"name": "s", "out": "out", "datasets": [{"dir": "tiny"}], "models": [{"name": "hash-test-embedder", "window_sets": [[16]]}]}`), 0o644)
	const inProcess = "is for a model behind a server (--model KIND:URL), and "
	runHostile(t, work, []hostileCase{
		{"cv-group without cv-folds", eval("--cv-group", "^(q)"), exitUsage, "eval: --cv-group groups the queries of cross-validation, which --cv-folds asks for", "-"},
		// Was accepted: every query its own group, as without the flag.
		{"cv-group matching no query", eval("--cv-folds", "2", "--cv-group", "^(x.*)-s[0-9]+$"), exitUsage,
			`--cv-group (Spec.CVGroup) "^(x.*)-s[0-9]+$" matches none of the ids of the 10 queries of tiny split test (such as "q0")`, "-"},
		// Was "the results share no query", after the whole search.
		{"cv-group of one group", eval("--cv-folds", "2", "--cv-group", "^(q)"), exitUsage,
			`puts the 10 queries of tiny split test in 1 group(s) (such as "q"), fewer than the 2 folds of --cv-folds`, "-"},
		{"cv-group of fewer groups than folds", eval("--cv-folds", "5", "--cv-group", "^q([01])?"), exitUsage, "in 3 group(s)", "-"},
		{"eval endpoints", eval("--endpoints", "http://127.0.0.1:9/v1"), exitUsage, "eval: --endpoints " + inProcess + "model hash-test-embedder runs in this process", "-"},
		{"index concurrency", []string{"index", "--corpus", data, "--out", out, "--model", "hash-test-embedder", "--concurrency", "8"}, exitUsage,
			"index: --concurrency " + inProcess + "model hash-test-embedder runs in this process", "-"},
		{"index tokenizer", []string{"index", "--corpus", data, "--out", out, "--model", "hash-test-embedder", "--tokenizer", queries}, exitUsage,
			"index: --tokenizer " + inProcess, "-"},
		{"no model request timeout", []string{"index", "--corpus", data, "--out", out, "--model", "none", "--tokenizer", "all-minilm-l6-v2", "--request-timeout", "5s"}, exitUsage,
			"index: --request-timeout " + inProcess + "--model none runs no model", "-"},
		{"search endpoints", []string{"search", "--index", idx, "--queries", queries, "--out", out, "--endpoints", "http://127.0.0.1:9/v1"}, exitUsage,
			"search: --endpoints " + inProcess + "index " + idx + "'s model hash-test-embedder runs in this process", "-"},
		{"search concurrency", []string{"search", "--index", idx, "--queries", queries, "--out", out, "--concurrency", "4"}, exitUsage, "search: --concurrency " + inProcess, "-"},
		{"embed endpoints", []string{"embed", "--model", "all-minilm-l6-v2", "--endpoints", "http://127.0.0.1:9/v1", "--out", out}, exitUsage,
			"embed: --endpoints " + inProcess + "model all-minilm-l6-v2 runs in this process", "-"},
		{"bench retries", []string{"bench", "--suite", suiteFile, "--retries", "3", "--out", out}, exitUsage,
			"bench: --retries " + inProcess + "no model of the suite is behind a server", "-"},
	})
}

// TestUnreadableModelInCache: a model that is in the cache but cannot be
// read was reported as not fetched (model list) or "not in the cache"
// (and fetched again, which failed on the cache's lock); it is reported as
// there but unreadable, naming the path and why. A link loop stands for a
// file no one may read (the tests may run as root, whom permissions do not
// stop); without root, a directory of mode 0 is tried too.
func TestUnreadableModelInCache(t *testing.T) {
	cacheDir := t.TempDir()
	t.Setenv("MSRAG_CACHE", cacheDir)
	dir := filepath.Join(cacheDir, "models", "all-minilm-l6-v2-int8")
	os.MkdirAll(dir, 0o755)
	info := filepath.Join(dir, "msrag-model.json")
	os.Symlink(info, info) // opening it: too many levels of symbolic links
	check := func(why string) {
		t.Helper()
		code, stdout, _ := limitedRun(t, time.Minute, "model", "list")
		if code != exitOK || !regexp.MustCompile(`all-minilm-l6-v2-int8 .* unreadable`).MatchString(stdout) {
			t.Errorf("model list: code %d, want the model unreadable:\n%s", code, stdout)
		}
		for _, offline := range []string{"--offline", "--quiet"} {
			code, _, stderr := limitedRun(t, time.Minute, "embed", "--model", "all-minilm-l6-v2-int8", offline)
			if want := "onnx: model all-minilm-l6-v2-int8: in the cache but unreadable: open " + why; code != exitFailure || !strings.Contains(stderr, want) {
				t.Errorf("embed %s: code %d, stderr %q; want %q", offline, code, stderr, want)
			}
		}
	}
	check(info + ": too many levels of symbolic links")
	if os.Geteuid() == 0 {
		return
	}
	os.Remove(info)
	os.Chmod(dir, 0)
	defer os.Chmod(dir, 0o755)
	check(dir + ": permission denied")
}
