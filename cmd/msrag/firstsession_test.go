package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/report"
)

// TestFirstSession runs README's first session as a new user would, right
// after make build: bin/msrag (with the ONNX Runtime library beside it, as
// make build leaves it) run from a temporary directory in a clean
// environment (env -i HOME=$tmp: no PATH, no MSRAG_CACHE, an empty cache),
// with no make install and no msrag model fetch. The model is fetched on
// its first use by msrag index (mvn is found in the system's standard
// directories, PATH being unset), then msrag search and msrag eval --index
// of the index msrag index built (without --full: eval leaves out the full
// window's configuration) run on a subset of SciFact, each with exit code 0. It downloads the model's jar, so it is skipped with -short,
// and when mvn is missing.
func TestFirstSession(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads a model: not with -short")
	}
	if !haveMvn() {
		t.Skip("mvn (Maven) is missing: the model's jar cannot be fetched (apt-get install maven)")
	}
	scifact := testfiles.DataDir("scifact")
	lib := onnx.LibraryPath()
	for _, p := range []string{filepath.Join(scifact, "qrels", "test.tsv"), lib} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "" {
				t.Skipf("%s absent (make setup): %v", p, err)
			}
			t.Fatalf("%s absent under CI: %v", p, err)
		}
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "repo", "bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "msrag"), ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	copyFile(t, lib, filepath.Join(bin, "libonnxruntime.so.1")) // what make build does
	home, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sub := exec.Command(filepath.Join("..", "..", "scripts", "subset-dataset.sh"), scifact, filepath.Join(work, "scifact-small"), "test", "100", "20")
	if out, err := sub.CombinedOutput(); err != nil {
		t.Fatalf("subset-dataset.sh: %v\n%s", err, out)
	}
	msragBin := filepath.Join(bin, "msrag")
	session := [][]string{
		{"index", "--corpus", "scifact-small", "--out", "idx", "--model", "all-minilm-l6-v2-int8", "--windows", "64,128,254"},
		{"search", "--index", "idx", "--queries", "scifact-small", "--split", "test", "--k", "10", "--out", "run.trec"},
		{"search", "--index", "idx", "--queries", "scifact-small", "--split", "test", "--k", "10", "--fusion", "rrf", "--out", "dense.trec"},
		{"search", "--index", "idx", "--queries", "scifact-small", "--split", "test", "--k", "10", "--fusion", "rrf:windows=lexical", "--out", "lexical.trec"},
		{"eval", "--dataset", "scifact-small", "--split", "test", "--index", "idx", "--out", "eval"},
		{"compare", "--qrels", "scifact-small/qrels/test.tsv", "run.trec", "dense.trec", "lexical.trec"},
	}
	var logs []string
	for _, args := range session {
		cmd := exec.Command(msragBin, args...)
		cmd.Dir, cmd.Env = work, []string{"HOME=" + home}
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("env -i HOME=%s msrag %s: %v\n%s", home, strings.Join(args, " "), err, stderr.String())
		}
		t.Logf("msrag %s: %.1f s", args[0], time.Since(t0).Seconds())
		logs = append(logs, stderr.String())
	}
	model := filepath.Join(home, ".cache", "msrag", "models", "all-minilm-l6-v2-int8")
	if info, _ := onnx.Builtin("all-minilm-l6-v2-int8"); !onnx.Present(model, info) {
		t.Errorf("the model is not whole in the user's cache %s", model)
	}
	if n := strings.Count(logs[0], "fetching it (first use)"); n != 1 {
		t.Errorf("msrag index said %d times that it fetched the model, want once:\n%s", n, logs[0])
	}
	for i, l := range logs[1:] {
		if strings.Contains(l, "fetching") {
			t.Errorf("msrag %s fetched again:\n%s", session[i+1][0], l)
		}
	}
	if !strings.Contains(logs[4], "reusing index idx (built by msrag index") || !strings.Contains(logs[4], "eval: leaving out full: index idx has no full window") {
		t.Errorf("eval did not reuse the index of msrag index (built without --full), leaving out full:\n%s", logs[4])
	}
	runs := map[string]string{}
	for _, f := range []string{"run.trec", "dense.trec", "lexical.trec"} {
		data, err := os.ReadFile(filepath.Join(work, f))
		if err != nil || len(data) == 0 {
			t.Errorf("search wrote no %s: %v", f, err)
		}
		runs[f] = string(data)
	}
	if runs["run.trec"] == runs["dense.trec"] || runs["run.trec"] == runs["lexical.trec"] {
		t.Errorf("the default search ranks as one kind of channel alone, not as the hybrid")
	}
	e, err := report.ReadFile(filepath.Join(work, "eval", "results.json"))
	if err != nil || e.Queries != 20 {
		t.Fatalf("eval results: %v (%+v queries), want 20 queries", err, e)
	}
	for _, name := range []string{"rrf", "rrf:windows=lexical", fusion.DefaultHybrid, "oracle:dense", "oracle:lexical"} {
		if e.Config(name) == nil {
			t.Errorf("eval has no configuration %s", name)
		}
	}
}

// haveMvn reports whether msrag can find mvn with PATH unset: on PATH here
// (for the message) or in the system's standard directories.
func haveMvn() bool {
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		if _, err := os.Stat(filepath.Join(d, "mvn")); err == nil {
			return true
		}
	}
	return false
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.WriteFile(dst, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
