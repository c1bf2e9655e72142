package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/faiss"
)

// TestEvalTaskNames checks --mteb-task: a task of the pinned mteb in mteb's
// spelling (another case is respelled, with a note, and its scoring rules
// apply), refused before any work when it is no task, another dataset's, or
// no name at all; --force-mteb-task takes the first two. Before, every
// string was taken as it was: "../../../../escaped-task" wrote the MTEB
// files over one another outside OUT/mteb, "arguana" applied no rule.
func TestEvalTaskNames(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "arguana")
	writeTinyDataset(t, data)
	idx := filepath.Join(dir, "idx")
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	out := filepath.Join(work, "out")
	eval := func(extra ...string) []string {
		return append([]string{"eval", "--dataset", data, "--index", idx, "--model", "hash-test-embedder", "--windows", "16", "--configs", "rrf",
			"--k", "20", "--window-k", "20", "--out", out}, extra...)
	}
	runHostile(t, work, []hostileCase{
		{"a path", eval("--mteb-task", "../../../../escaped-task"), exitUsage, "a task name is a name, not a path", "-"},
		{"a path, forced", eval("--mteb-task", "../../x", "--force-mteb-task"), exitUsage, "a task name is a name, not a path", "-"},
		{"a/b", eval("--mteb-task", "a/b"), exitUsage, "a task name is a name", "-"},
		{"a space", eval("--mteb-task", "Sci Fact"), exitUsage, "a task name is a name", "-"},
		{"a newline", eval("--mteb-task", "SciFact\nx"), exitUsage, "a task name is a name", "-"},
		{"no such task", eval("--mteb-task", "NoSuchTask"), exitUsage, `"NoSuchTask": unknown MTEB retrieval task of mteb`, "-"},
		{"another dataset's task", eval("--mteb-task", "SciFact"), exitUsage, "MTEB task SciFact disagrees with the dataset " + data + ", which is ArguAna's", "-"},
		{"images", eval("--mteb-task", "ABOI2VRetrieval"), exitUsage, "msrag evaluates text", "-"},
		{"force alone", eval("--force-mteb-task"), exitUsage, "--force-mteb-task forces the task --mteb-task names, and none is given", "-"},
	})
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, []byte("mine\n"), 0o644)
	runHostile(t, work, []hostileCase{{"--out a file", append(eval(), "--out", notDir), exitUsage, "--out " + notDir + " exists and is not a directory", "-"}})
	if _, err := os.Stat(idx); err == nil {
		t.Errorf("%s was built before the refusals", idx)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped-task.json")); err == nil {
		t.Error("escaped-task.json was written outside --out")
	}

	code, _, stderr := runCLI(t, "", eval("--mteb-task", "arguana")...)
	if code != exitOK || !strings.Contains(stderr, "eval: --mteb-task arguana is ArguAna in mteb's spelling") {
		t.Fatalf("--mteb-task arguana: exit %d: %s", code, stderr)
	}
	e := readEval(t, out)
	if e.MTEB.Task != "ArguAna" || !e.Scoring.IgnoreIdenticalIDs || !strings.HasSuffix(e.Scoring.Source, "task ArguAna") {
		t.Errorf("--mteb-task arguana: task %q, scoring %+v", e.MTEB.Task, e.Scoring)
	}
	forced := filepath.Join(dir, "forced")
	if code, _, stderr := runCLI(t, "", append(eval("--mteb-task", "scifact", "--force-mteb-task", "--quiet"), "--out", forced)...); code != exitOK {
		t.Fatalf("--mteb-task scifact --force-mteb-task: exit %d: %s", code, stderr)
	}
	if e := readEval(t, forced); e.MTEB.Task != "SciFact" || e.Scoring.IgnoreIdenticalIDs {
		t.Errorf("forced SciFact: task %q, scoring %+v", e.MTEB.Task, e.Scoring)
	}
	matches, _ := filepath.Glob(filepath.Join(forced, "mteb", "results", "*", "*", "SciFact.json"))
	if len(matches) != 1 {
		t.Errorf("MTEB files of the forced task: %v", matches)
	}
}

// TestFlagsActOrAreRefused checks the flags that did nothing, exit 0:
// eval --no-lexical with a fusion model of lexical channels (it fused them
// all the same, over an index that had them) is refused before any work,
// and results.json names every configuration's channels; a device in the
// phases that use none, and on bench with no model that runs on one, is
// refused; qrels that judge nothing in the corpus are an error naming them.
func TestFlagsActOrAreRefused(t *testing.T) {
	hashTokenizer(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny")
	writeTinyDataset(t, data)
	splitTrainDev(t, data)
	idx := filepath.Join(dir, "idx")
	eval := func(out string, extra ...string) []string {
		return append([]string{"eval", "--dataset", data, "--index", idx, "--model", "hash-test-embedder", "--windows", "64,128,254", "--configs", "rrf",
			"--k", "20", "--window-k", "20", "--quiet", "--out", filepath.Join(dir, out)}, extra...)
	}
	if code, _, stderr := runCLI(t, "", eval("transfer", "--fusion-model", "transfer")...); code != exitOK {
		t.Fatalf("eval --fusion-model transfer: exit %d: %s", code, stderr)
	}
	if c := readEval(t, filepath.Join(dir, "transfer")).Config("transfer"); c == nil || c.Channels != "hybrid" {
		t.Errorf("configuration transfer: %+v, want its channels recorded (hybrid)", c)
	}
	model := filepath.Join(dir, "fusion.json")
	if code, _, stderr := runCLI(t, "", "tune", "--dataset", data, "--split", "train", "--index", idx, "--out", model, "--folds", "2", "--quiet"); code != exitOK {
		t.Fatalf("tune: exit %d: %s", code, stderr)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	runHostile(t, work, []hostileCase{
		{"--no-lexical with transfer", eval("work/out", "--no-lexical", "--fusion-model", "transfer"), exitUsage,
			"the built-in fusion transfer fuses bm25-w64, bm25-w128, bm25-w254, bm25-full, bm25-doc, which this evaluation does not fuse", "-"},
		{"--no-lexical with a tuned model", eval("work/out", "--split", "dev", "--no-lexical", "--fusion-model", model), exitUsage,
			"the fusion model fuses bm25-w64", "-"},
	})

	// Phases and bench.
	_, shards := shardedTiny(t, 2)
	search := []string{"search", "--index", shards, "--queries", data, "--work", filepath.Join(work, "w"), "--quiet"}
	suiteFile := filepath.Join(dir, "s.json")
	os.WriteFile(suiteFile, []byte(fmt.Sprintf(`{"name": "s", "out": %q, "datasets": [{"dir": %q}], "models": [{"name": "hash-test-embedder", "window_sets": [[16]]}]}`,
		filepath.Join(work, "bench"), data)), 0o644)
	runHostile(t, work, []hostileCase{
		{"search stats, cuda", append(search, "--phase", "stats", "--shard", "0/2", "--device", "cuda"), exitUsage, "--device cuda with --phase stats", "-"},
		{"search gather, gpus", append(search, "--phase", "gather", "--gpus", "0"), exitUsage, "--gpus 0 with --phase gather", "-"},
		{"eval gather, cuda", []string{"eval", "--dataset", data, "--index", shards, "--model", "hash-test-embedder", "--windows", "16,32", "--out", filepath.Join(work, "o"),
			"--phase", "gather", "--work", filepath.Join(work, "w"), "--device", "cuda"}, exitUsage, "--device cuda with --phase gather", "-"},
		{"bench, cuda", []string{"bench", "--suite", suiteFile, "--check", "--device", "cuda"}, exitUsage, "no model of the suite runs on a device", "-"},
		{"bench, gpus", []string{"bench", "--suite", suiteFile, "--check", "--gpus", "0,1"}, exitUsage, "--gpus 0,1: no model of the suite runs on a device", "-"},
	})

	// Qrels of documents the corpus lacks, and of scores all -1.
	for name, qrels := range map[string]string{"absent": "q0\tother-1\t1\nq1\tother-2\t2\n", "negative": "q0\td0\t-1\nq1\td1\t-1\n"} {
		ds := filepath.Join(dir, name)
		writeTinyDataset(t, ds)
		qpath := filepath.Join(ds, "qrels", "test.tsv")
		os.WriteFile(qpath, []byte("query-id\tcorpus-id\tscore\n"+qrels), 0o644)
		want := map[string]string{"absent": `none of the 2 documents ` + qpath + ` judges relevant (such as "other-1") is in the corpus`,
			"negative": qpath + " judges no document relevant (every score is 0 or below)"}[name]
		runHostile(t, work, []hostileCase{{"qrels " + name, []string{"eval", "--dataset", ds, "--index", filepath.Join(dir, "idx-"+name), "--model", "hash-test-embedder",
			"--windows", "16", "--configs", "rrf", "--quiet", "--out", filepath.Join(work, "q")}, exitFailure, want, "-"}})
	}
}

// TestIndexRefusalsBeforeWork checks what index refuses before opening the
// model or reading the corpus: an --out that is not an index (a directory
// of other files, a file, a link), which failed only after the whole build
// with "exists and may not be replaced"; a factory FAISS parses otherwise
// (white space; a form FAISS refuses); a document line above
// --max-doc-bytes, refused when it is read, before it is tokenized.
func TestIndexRefusalsBeforeWork(t *testing.T) {
	needHashTokenizer(t)
	dir := t.TempDir()
	corpusPath := writeCorpus(t, dir)
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine\n"), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("mine\n"), 0o644)
	os.Symlink(other, filepath.Join(dir, "link"))
	big := filepath.Join(dir, "big.jsonl")
	os.WriteFile(big, []byte(`{"_id": "a", "text": "one"}`+"\n"+`{"_id": "b", "text": "`+strings.Repeat("word ", 400)+`"}`+"\n"), 0o644)
	index := func(out string, extra ...string) []string {
		return append([]string{"index", "--corpus", corpusPath, "--out", filepath.Join(dir, out), "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"}, extra...)
	}
	const left = "big.jsonl corpus.jsonl file link other"
	cases := []hostileCase{
		{"a directory of other files", index("other"), exitUsage, "other holds 1 entries (such as notes.txt) and no manifest.json: it is not an index", left},
		{"a file", index("file"), exitUsage, "file is a regular file, not an index directory", left},
		{"a link", index("link"), exitUsage, "link is a symbolic link (to " + other + ")", left},
		{"factory with spaces", index("idx", "--factory", " Flat "), exitUsage, `factory " Flat ": invalid argument: white space at byte 0`, left},
		{"a document over the limit", []string{"index", "--corpus", big, "--out", filepath.Join(dir, "idx"), "--model", "hash-test-embedder", "--windows", "4,8",
			"--quiet", "--max-doc-bytes", "1000"}, exitFailure, "big.jsonl line 2: more than 1000 bytes, the most a document's line may hold", left},
		{"--max-doc-bytes 0", index("idx", "--max-doc-bytes", "0"), exitUsage, "--max-doc-bytes 0: want 1 to 268435456", left},
	}
	if strings.HasPrefix(faiss.Version(), "1.7.") { // a form the parser takes and FAISS 1.7 refuses
		cases = append(cases, hostileCase{"factory FAISS refuses", index("idx", "--factory", "IVF2,PQ8x10"), exitUsage, `faiss: new "IVF2,PQ8x10": native error`, left})
	}
	runHostile(t, dir, cases)
	if data, _ := os.ReadFile(filepath.Join(other, "notes.txt")); string(data) != "mine\n" {
		t.Errorf("other/notes.txt holds %q", data)
	}
	start := time.Now()
	if code, _, stderr := runCLI(t, "", "index", "--corpus", big, "--out", filepath.Join(dir, "idx"), "--model", "hash-test-embedder", "--windows", "4,8", "--quiet"); code != exitOK {
		t.Errorf("a document of 2 KB under the default limit: exit %d: %s", code, stderr)
	}
	t.Logf("built in %v", time.Since(start))
	var m map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, "idx", "manifest.json")); err != nil || json.Unmarshal(b, &m) != nil {
		t.Errorf("no index: %v", err)
	}
}
