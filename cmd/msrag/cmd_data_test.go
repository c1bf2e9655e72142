package main

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/mteb"
	"github.com/msrag/msrag/onnx"
)

// tinyCommit is the commit the test hub serves.
const tinyCommit = "89abcdef0123456789abcdef0123456789abcdef"

// tinyHub serves testdata/hub/mteb-tiny as the dataset repository mteb/tiny
// through the three endpoints of a Hugging Face hub that package hub uses:
// the revision API, the tree API and the resolve URLs. corpus.jsonl is listed
// as an LFS file (checked by sha256), the others as git blobs (checked by
// blob id). It counts the requests.
func tinyHub(t testing.TB) (*httptest.Server, *atomic.Int64) {
	return tinyHubAs(t, "mteb-tiny", "mteb/tiny", tinyCommit)
}

// tinyHubAs serves testdata/hub/DIR as the dataset repository repo at
// commit, as tinyHub does.
func tinyHubAs(t testing.TB, dir, repo, commit string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	root := filepath.Join("testdata", "hub", dir)
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	api, resolve := "/api/datasets/"+repo+"/", "/datasets/"+repo+"/resolve/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		switch p := r.URL.Path; {
		case p == api+"revision/main" || p == api+"revision/"+commit:
			json.NewEncoder(w).Encode(map[string]string{"id": repo, "sha": commit})
		case p == api+"tree/"+commit && r.URL.Query().Get("recursive") == "true":
			json.NewEncoder(w).Encode(tinyListing(files))
		case strings.HasPrefix(p, resolve+commit+"/") && files[strings.TrimPrefix(p, resolve+commit+"/")] != nil:
			w.Write(files[strings.TrimPrefix(p, resolve+commit+"/")])
		default:
			w.Header().Set("X-Error-Code", "RepoNotFound")
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &requests
}

// tinyListing is the tree API's answer for files.
func tinyListing(files map[string][]byte) []map[string]any {
	var out []map[string]any
	for path, data := range files {
		blob := sha1.New()
		fmt.Fprintf(blob, "blob %d\x00", len(data))
		blob.Write(data)
		e := map[string]any{"type": "file", "path": path, "size": len(data), "oid": hex.EncodeToString(blob.Sum(nil))}
		if path == "corpus.jsonl" {
			sum := sha256.Sum256(data)
			e["lfs"] = map[string]any{"oid": hex.EncodeToString(sum[:]), "size": len(data), "pointerSize": 130}
		}
		out = append(out, e)
	}
	return out
}

func TestDataFetch(t *testing.T) {
	srv, requests := tinyHub(t)
	t.Setenv(hub.EnvEndpoint, srv.URL)
	t.Setenv(hub.EnvToken, "")
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
	asked := requests.Load()
	code, stdout, stderr = runCLI(t, "", "data", "fetch", "--quiet", "--dir", root, "hf:mteb/tiny@main")
	if code != exitOK || strings.TrimSpace(stdout) != dir || stderr != "" || requests.Load() != asked {
		t.Errorf("second fetch: code %d, stdout %q, stderr %q, %d requests", code, stdout, stderr, requests.Load()-asked)
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
	srv, _ := tinyHub(t)
	for _, tc := range []struct {
		name, endpoint string
		args           []string
		code           int
		want           string
	}{
		{"no name", srv.URL, nil, exitUsage, "name at least one dataset"},
		{"not an mteb dataset", srv.URL, []string{"hf:someone/tiny@main"}, exitUsage, "want hf:mteb/NAME"},
		{"no such task", srv.URL, []string{"mteb:NoSuchTask"}, exitUsage, "unknown MTEB retrieval task"},
		{"a task msrag cannot lay out", srv.URL, []string{"mteb:LEMBQMSumRetrieval"}, exitUsage, "dwzhu/LongEmbed"},
		{"no pinned revision", srv.URL, []string{"hf:mteb/tiny"}, exitUsage, "has no pinned revision"},
		{"a bad name after a good one fetches nothing", srv.URL, []string{"hf:mteb/tiny@main", "scifact"}, exitUsage, "want hf:mteb/NAME"},
		{"malformed endpoint", "localhost:8080", []string{"hf:mteb/tiny@main"}, exitUsage, "$" + hub.EnvEndpoint},
		{"no such repository", srv.URL, []string{"hf:mteb/absent@main"}, exitFailure, "404"},
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

// TestEvalMTEBTask runs msrag eval --dataset mteb:SciFact from a hub that
// serves mteb/scifact (a tiny stand-in of its files) at the revision mteb's
// SciFact task pins: the dataset is fetched into the cache on first use,
// evaluated on the task's split, and named as the task in the MTEB result
// files with the commit; a second run, offline, asks the hub nothing.
func TestEvalMTEBTask(t *testing.T) {
	task, _ := mteb.Get("SciFact")
	srv, requests := tinyHubAs(t, "mteb-tiny", "mteb/scifact", task.Revision)
	t.Setenv(hub.EnvEndpoint, srv.URL)
	hashTokenizer(t)
	scratchCache(t)
	args := []string{"eval", "--quiet", "--dataset", "mteb:SciFact", "--model", "hash-test-embedder", "--windows", "8", "--k", "10", "--window-k", "10"}
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", append(args, "--out", out)...)
	if code != exitOK {
		t.Fatalf("eval: code %d\n%s", code, stderr)
	}
	e := readEval(t, out)
	if e.Split != "test" || e.MTEB == nil || e.MTEB.Task != "SciFact" || e.MTEB.DatasetRevision != task.Revision || e.Queries != 2 {
		t.Errorf("split %s, mteb %+v, %d queries", e.Split, e.MTEB, e.Queries)
	}
	asked := requests.Load()
	code, _, stderr = runCLI(t, "", append(args, "--offline", "--out", t.TempDir())...)
	if code != exitOK || requests.Load() != asked {
		t.Errorf("offline, present: code %d, %d requests\n%s", code, requests.Load()-asked, stderr)
	}
}

// TestEvalMTEBTaskRule runs msrag eval --dataset mteb:ArguAna, whose task
// drops a retrieved document whose id is the query's (every query here is
// also a document, found first): the rule is applied and said to be the
// task's.
func TestEvalMTEBTaskRule(t *testing.T) {
	task, _ := mteb.Get("ArguAna")
	srv, _ := tinyHubAs(t, "mteb-arguana-tiny", "mteb/arguana", task.Revision)
	t.Setenv(hub.EnvEndpoint, srv.URL)
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
