package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/hubserve"
	"github.com/msrag/msrag/onnx"
)

// tinyCommit is the commit of mteb/tiny on the stand-in hub.
const tinyCommit = "89abcdef0123456789abcdef0123456789abcdef"

// tinyHub serves testdata/hub/mteb-tiny as the dataset repository mteb/tiny
// from the stand-in hub.
func tinyHub(t testing.TB) (string, *hubserve.Server) {
	return serveHub(t, hubRepo{hubserve.Datasets, "mteb/tiny", tinyCommit, mtebDataset(t, "mteb-tiny")})
}

func TestDataFetch(t *testing.T) {
	_, h := tinyHub(t)
	root := t.TempDir()

	code, stdout, stderr := runCLI(t, "", "data", "fetch", "--dir", root, "hf:mteb/tiny@main")
	if code != exitOK {
		t.Fatalf("data fetch: code %d\n%s", code, stderr)
	}
	dir := strings.TrimSpace(stdout)
	if want := filepath.Join(root, "hf--mteb--tiny@main"); dir != want {
		t.Fatalf("data fetch printed %q, want %q", dir, want)
	}
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if qrels, err := ds.ReadJudgements("test"); err != nil || len(qrels) != 2 {
		t.Errorf("test judgements of the fetched dataset: %v, %v", qrels, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Errorf("the fetched dataset holds README.md, which is not part of a dataset")
	}
	if repo, _, commit, ok := hub.Fetched(dir); !ok || repo != "mteb/tiny" || commit != tinyCommit {
		t.Errorf("stamp: %s at %s (%v)", repo, commit, ok)
	}

	// Present now: the same directory, no request; --quiet says nothing.
	asked := h.Requests()
	code, stdout, stderr = runCLI(t, "", "data", "fetch", "--quiet", "--dir", root, "hf:mteb/tiny@main")
	if code != exitOK || strings.TrimSpace(stdout) != dir || stderr != "" || h.Requests() != asked {
		t.Errorf("second fetch: code %d, stdout %q, stderr %q, %d requests", code, stdout, stderr, h.Requests()-asked)
	}

	// msrag eval takes the printed directory as its dataset.
	hashTokenizer(t)
	out := t.TempDir()
	code, _, stderr = runCLI(t, "", "eval", "--quiet", "--dataset", dir, "--model", "hash-test-embedder",
		"--windows", "8", "--out", out, "--k", "3", "--window-k", "3")
	if code != exitOK {
		t.Fatalf("eval of the fetched dataset: code %d\n%s", code, stderr)
	}
	if e := readEval(t, out); e.Queries != 2 || e.Docs != 3 {
		t.Errorf("eval of the fetched dataset: %d queries, %d documents; want 2 and 3", e.Queries, e.Docs)
	}
}

func TestDataFetchErrors(t *testing.T) {
	url, _ := tinyHub(t)
	for _, tc := range []struct {
		name, endpoint string
		args           []string
		code           int
		want           string
	}{
		{"no name", url, nil, exitUsage, "name at least one dataset"},
		{"not an mteb dataset", url, []string{"hf:someone/tiny@main"}, exitUsage, "want hf:mteb/NAME"},
		{"no such task", url, []string{"mteb:NoSuchTask"}, exitUsage, "unknown MTEB retrieval task"},
		{"a task msrag cannot lay out", url, []string{"mteb:LEMBQMSumRetrieval"}, exitUsage, "dwzhu/LongEmbed"},
		{"no pinned revision", url, []string{"hf:mteb/tiny"}, exitUsage, "has no pinned revision"},
		{"a bad name after a good one fetches nothing", url, []string{"hf:mteb/tiny@main", "scifact"}, exitUsage, "want hf:mteb/NAME"},
		{"malformed endpoint", "localhost:8080", []string{"hf:mteb/tiny@main"}, exitUsage, "$" + hub.EnvEndpoint},
		{"no such repository", url, []string{"hf:mteb/absent@main"}, exitFailure, "404"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(hub.EnvEndpoint, tc.endpoint)
			root := t.TempDir()
			code, stdout, stderr := runCLI(t, "", append([]string{"data", "fetch", "--dir", root}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("code %d, stderr %q; want code %d and %q", code, stderr, tc.code, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if es, _ := os.ReadDir(root); len(es) != 0 {
				t.Errorf("%s holds %d entries after a failed fetch", root, len(es))
			}
		})
	}
}

// TestDataFetchDefaultHub: with no endpoint in the environment, data fetch
// asks https://huggingface.co, and the error of a failed request names it. A
// loopback proxy stands in for the network: it records the CONNECT and
// refuses it, so the test reaches no hub, with or without internet.
func TestDataFetchDefaultHub(t *testing.T) {
	var connects []string
	var mu sync.Mutex
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		connects = append(connects, r.Method+" "+r.Host)
		mu.Unlock()
		http.Error(w, "no network in this test", http.StatusBadGateway)
	}))
	defer proxy.Close()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case hub.EnvEndpoint, hub.EnvHFEndpoint, hub.EnvToken, hub.EnvTokenLegacy, hub.EnvTokenPath, hub.EnvHome,
			hub.EnvOffline, hub.EnvOfflineLegacy, "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY":
			continue
		}
		env = append(env, kv)
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "data", "fetch", "--dir", root, "hf:mteb/scifact")
	cmd.Env = append(env, "MSRAG_TEST_MAIN=1", "HTTPS_PROXY="+proxy.URL, hub.EnvHome+"="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	rev, _ := hub.PinnedRevision("scifact")
	want := "GET https://huggingface.co/api/datasets/mteb/scifact/tree/" + rev
	if code := cmd.ProcessState.ExitCode(); code != exitFailure || !strings.Contains(stderr.String(), want) {
		t.Errorf("code %d (%v), stderr %q; want %d and an error naming %s", code, err, stderr.String(), exitFailure, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(connects) == 0 || connects[0] != "CONNECT huggingface.co:443" {
		t.Errorf("the proxy saw %q, want CONNECT huggingface.co:443", connects)
	}
	if es, _ := os.ReadDir(root); len(es) != 0 || stdout.Len() != 0 {
		t.Errorf("a failed fetch printed %q and left %d entries", stdout.String(), len(es))
	}
}

// TestEvalMTEBTaskRule runs msrag eval --dataset mteb:ArguAna, whose task
// drops a retrieved document whose id is the query's (every query here is
// also a document, found first): the rule is applied and said to be the
// task's.
func TestEvalMTEBTaskRule(t *testing.T) {
	serveHub(t, hubRepo{hubserve.Datasets, "mteb/arguana", mtebRevision(t, "ArguAna"), mtebDataset(t, "mteb-arguana-tiny")})
	hashTokenizer(t)
	scratchCache(t)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "eval", "--quiet", "--dataset", "mteb:ArguAna", "--model", "hash-test-embedder",
		"--windows", "8", "--k", "10", "--window-k", "10", "--out", out)
	if code != exitOK {
		t.Fatalf("eval: code %d\n%s", code, stderr)
	}
	e := readEval(t, out)
	if !e.Scoring.IgnoreIdenticalIDs || !strings.Contains(e.Scoring.Source, "task ArguAna") || e.Scoring.Dropped == 0 || e.MTEB.Task != "ArguAna" {
		t.Errorf("scoring %+v, mteb %+v", e.Scoring, e.MTEB)
	}
}

// scratchCache points the cache at an empty directory for the test, with
// the models of the cache it had.
func scratchCache(t *testing.T) {
	t.Helper()
	models := onnx.ModelsDir()
	cache := t.TempDir()
	if err := os.Symlink(models, filepath.Join(cache, "models")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(hub.EnvCache, cache)
}
