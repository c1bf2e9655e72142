package hubserve_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/hubserve"
)

const (
	dataCommit  = "1111111111111111111111111111111111111111"
	modelCommit = "2222222222222222222222222222222222222222"
)

// layout writes a root with the dataset mteb/tiny (JSONL parts under LFS,
// qrels in git), the model org/tiny-model (its .onnx under LFS) and one
// plain file, and returns it.
func layout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	data := func(s string) hubserve.File { return hubserve.File{Data: []byte(s)} }
	err := hubserve.AddRepo(root, hubserve.Datasets, "mteb/tiny", dataCommit, map[string]hubserve.File{
		".gitattributes": data("*.parquet filter=lfs diff=lfs merge=lfs -text\n*.jsonl filter=lfs diff=lfs merge=lfs -text\n"),
		"README.md":      data("# tiny\n"),
		"corpus.jsonl":   data(`{"_id": "d1", "title": "", "text": "alpha beta"}` + "\n" + `{"_id": "d2", "title": "T", "text": "gamma"}` + "\n"),
		"queries.jsonl":  data(`{"_id": "q1", "text": "beta?"}` + "\n"),
		"qrels/test.tsv": data("query-id\tcorpus-id\tscore\nq1\td1\t1\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	err = hubserve.AddRepo(root, hubserve.Models, "org/tiny-model", modelCommit, map[string]hubserve.File{
		".gitattributes":  data("*.onnx filter=lfs diff=lfs merge=lfs -text\nsaved_model/**/* filter=lfs diff=lfs merge=lfs -text\n"),
		"onnx/model.onnx": data("ONNX BYTES"),
		"tokenizer.json":  data(`{"model": {}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "files", "archive.tar.gz"), []byte("ARCHIVE"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestAddRepo: files from disk are linked or copied unchanged, dot-files of
// a directory left out, a File's Data replaces a file From disk without
// touching it, and bad names and a second revision at the same commit are
// refused.
func TestAddRepo(t *testing.T) {
	src := t.TempDir()
	for p, s := range map[string]string{"a.json": "A", "sub/b.bin": "B", ".complete": "", ".git/x": "X"} {
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(src, p), []byte(s), 0o644)
	}
	files, err := hubserve.FilesIn(src)
	if err != nil || len(files) != 2 || files["sub/b.bin"].From != filepath.Join(src, "sub", "b.bin") {
		t.Fatalf("FilesIn: %v, %v; want a.json and sub/b.bin", files, err)
	}
	files["a.json"] = hubserve.File{Data: []byte("A2")}
	root := t.TempDir()
	if err := hubserve.AddRepo(root, hubserve.Models, "org/m", modelCommit, files); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(root, "models", "org", "m", modelCommit)
	for p, want := range map[string]string{"a.json": "A2", "sub/b.bin": "B", "../refs/main": modelCommit + "\n"} {
		if got, err := os.ReadFile(filepath.Join(tree, filepath.FromSlash(p))); err != nil || string(got) != want {
			t.Errorf("%s holds %q (%v), want %q", p, got, err, want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(src, "a.json")); string(got) != "A" {
		t.Errorf("the source a.json was changed to %q", got)
	}
	for _, tc := range []struct {
		kind           hubserve.Kind
		id, commit, at string
	}{
		{"spaces", "org/m", dataCommit, "a"},
		{hubserve.Models, "org-m", dataCommit, "a"},
		{hubserve.Models, "org/../m", dataCommit, "a"},
		{hubserve.Models, "org/m", "main", "a"},
		{hubserve.Models, "org/m", dataCommit, "../a"},
		{hubserve.Models, "org/m", dataCommit, "/a"},
		{hubserve.Models, "org/m", dataCommit, "a/./b"},
		{hubserve.Models, "org/m", modelCommit, "a"},
	} {
		if err := hubserve.AddRepo(root, tc.kind, tc.id, tc.commit, map[string]hubserve.File{tc.at: {Data: []byte("x")}}); err == nil {
			t.Errorf("%s %s at %s with %s: no error", tc.kind, tc.id, tc.commit, tc.at)
		}
	}
}

// serve starts a server on root.
func serve(t *testing.T, cfg hubserve.Config) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(hubserve.New(cfg))
	t.Cleanup(srv.Close)
	return srv
}

// TestFetchThroughHubClient: msrag's own client fetches the dataset and the
// model's files, checking every size, sha256 and git blob id the listing
// gives.
func TestFetchThroughHubClient(t *testing.T) {
	srv := serve(t, hubserve.Config{Root: layout(t)})
	t.Setenv(hub.EnvToken, "")
	t.Setenv(hub.EnvHome, t.TempDir())
	opts := hub.Options{Endpoint: srv.URL}
	dir, err := hub.FetchDataset(context.Background(), "hf:mteb/tiny@main", hub.DatasetOptions{Options: opts, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if qrels, err := ds.ReadJudgements("test"); err != nil || len(qrels) != 1 {
		t.Errorf("judgements %v, %v", qrels, err)
	}
	if _, _, commit, ok := hub.Fetched(dir); !ok || commit != dataCommit {
		t.Errorf("fetched commit %s (%v), want %s", commit, ok, dataCommit)
	}
	c, err := hub.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	model := hub.Repo{ID: "org/tiny-model"}
	if got, err := c.Commit(context.Background(), model, "main"); err != nil || got != modelCommit {
		t.Errorf("model commit %q, %v", got, err)
	}
	dst := filepath.Join(t.TempDir(), "model.onnx")
	if _, err := c.Download(context.Background(), model, "main", hub.Unlisted("onnx/model.onnx"), dst); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "ONNX BYTES" {
		t.Errorf("model.onnx holds %q", got)
	}
}

// listing returns the recursive tree of the dataset at rev.
func listing(t *testing.T, base, rev string) map[string]hubserve.Entry {
	t.Helper()
	var entries []hubserve.Entry
	getJSON(t, base+"/api/datasets/mteb/tiny/tree/"+rev+"?recursive=true", &entries)
	byPath := map[string]hubserve.Entry{}
	for _, e := range entries {
		byPath[e.Path] = e
	}
	return byPath
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestListing checks the tree API against values computed apart from the
// server: sha256 of the LFS files, and git's own blob ids (git hash-object)
// of the other files and of the LFS pointers.
func TestListing(t *testing.T) {
	root := layout(t)
	srv := serve(t, hubserve.Config{Root: root})
	got := listing(t, srv.URL, "main")
	if len(got) != 6 || got["qrels"].Type != "directory" {
		t.Fatalf("listing %+v, want 5 files and the directory qrels", got)
	}
	files := filepath.Join(root, "datasets", "mteb", "tiny", dataCommit)
	corpusData, _ := os.ReadFile(filepath.Join(files, "corpus.jsonl"))
	sum := sha256.Sum256(corpusData)
	c := got["corpus.jsonl"]
	if c.LFS == nil || c.LFS.OID != hex.EncodeToString(sum[:]) || c.Size != int64(len(corpusData)) || c.LFS.Size != c.Size {
		t.Errorf("corpus.jsonl: %+v %+v, want LFS with sha256 %x and size %d", c, c.LFS, sum, len(corpusData))
	}
	if got["qrels/test.tsv"].LFS != nil || got["README.md"].LFS != nil {
		t.Errorf("files in git listed as LFS: %+v", got)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is missing: blob ids not checked against git's")
	}
	pointer := "version https://git-lfs.github.com/spec/v1\noid sha256:" + c.LFS.OID + "\nsize " + strconv.Itoa(len(corpusData)) + "\n"
	if c.LFS.PointerSize != len(pointer) {
		t.Errorf("pointer size %d, want %d", c.LFS.PointerSize, len(pointer))
	}
	for path, e := range map[string]hubserve.Entry{"qrels/test.tsv": got["qrels/test.tsv"], "README.md": got["README.md"]} {
		if want := gitHashObject(t, filepath.Join(files, filepath.FromSlash(path))); e.OID != want {
			t.Errorf("%s: oid %s, git says %s", path, e.OID, want)
		}
	}
	p := filepath.Join(t.TempDir(), "pointer")
	os.WriteFile(p, []byte(pointer), 0o644)
	if want := gitHashObject(t, p); c.OID != want {
		t.Errorf("corpus.jsonl: oid %s, git says %s for its pointer", c.OID, want)
	}
	var top []hubserve.Entry
	getJSON(t, srv.URL+"/api/datasets/mteb/tiny/tree/"+dataCommit, &top)
	if len(top) != 5 {
		t.Errorf("top level without recursive: %+v, want 4 files and qrels", top)
	}
	var info struct {
		ID, SHA  string
		Siblings []struct{ RFilename string }
	}
	getJSON(t, srv.URL+"/api/datasets/mteb/tiny/revision/main", &info)
	if info.ID != "mteb/tiny" || info.SHA != dataCommit || len(info.Siblings) != 5 {
		t.Errorf("revision info %+v", info)
	}
}

func gitHashObject(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("git", "hash-object", path).Output()
	if err != nil {
		t.Fatalf("git hash-object %s: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}

// TestErrors: what the hub answers for what it does not hold, a missing
// token, and paths that climb out of the root.
func TestErrors(t *testing.T) {
	srv := serve(t, hubserve.Config{Root: layout(t)})
	for _, tc := range []struct {
		path   string
		status int
		code   string
	}{
		{"/api/datasets/mteb/absent/revision/main", 404, "RepoNotFound"},
		{"/api/datasets/mteb/tiny/revision/no-branch", 404, "RevisionNotFound"},
		{"/api/datasets/mteb/tiny/tree/" + modelCommit, 404, "RevisionNotFound"},
		{"/datasets/mteb/tiny/resolve/main/absent.jsonl", 404, "EntryNotFound"},
		{"/datasets/mteb/tiny/resolve/main/qrels", 404, "EntryNotFound"},
		{"/org/tiny-model/resolve/main/onnx/../../../refs/main", 400, ""},
		{"/files/../datasets/mteb/tiny/refs/main", 400, ""},
		{"/files/absent", 404, "EntryNotFound"},
		{"/nothing", 404, ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		req.URL.Opaque = tc.path // keep the dot segments
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("X-Error-Code") != tc.code || resp.Header.Get("X-Error-Message") == "" {
			t.Errorf("%s: %s, X-Error-Code %q; want %d, %q and a message", tc.path, resp.Status, resp.Header.Get("X-Error-Code"), tc.status, tc.code)
		}
	}
	locked := serve(t, hubserve.Config{Root: layout(t), Token: "hf_secret"})
	t.Setenv(hub.EnvToken, "")
	t.Setenv(hub.EnvHome, t.TempDir())
	for _, tok := range []string{"", "hf_wrong"} {
		c, _ := hub.NewClient(hub.Options{Endpoint: locked.URL, Token: tok})
		if _, err := c.Commit(context.Background(), hub.Repo{ID: "mteb/tiny", Dataset: true}, "main"); !errors.Is(err, hub.ErrUnauthorized) {
			t.Errorf("token %q: %v, want ErrUnauthorized", tok, err)
		}
	}
	c, _ := hub.NewClient(hub.Options{Endpoint: locked.URL, Token: "hf_secret"})
	if got, err := c.Commit(context.Background(), hub.Repo{ID: "mteb/tiny", Dataset: true}, "main"); err != nil || got != dataCommit {
		t.Errorf("with the token: %q, %v", got, err)
	}
}

// TestResolveHeaders: HEAD, ranges, the commit and ETag headers, and plain
// files.
func TestResolveHeaders(t *testing.T) {
	srv := serve(t, hubserve.Config{Root: layout(t)})
	entries := listing(t, srv.URL, dataCommit)
	resp, err := http.Head(srv.URL + "/datasets/mteb/tiny/resolve/main/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Repo-Commit") != dataCommit || resp.Header.Get("ETag") != `"`+entries["corpus.jsonl"].LFS.OID+`"` ||
		resp.ContentLength != entries["corpus.jsonl"].Size {
		t.Errorf("HEAD corpus.jsonl: %v", resp.Header)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/datasets/mteb/tiny/resolve/"+dataCommit+"/qrels/test.tsv", nil)
	req.Header.Set("Range", "bytes=9-")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || string(body) != "corpus-id\tscore\nq1\td1\t1\n" || resp.Header.Get("ETag") != `"`+entries["qrels/test.tsv"].OID+`"` {
		t.Errorf("range of qrels/test.tsv: %s %q %v", resp.Status, body, resp.Header)
	}
	resp, err = http.Get(srv.URL + "/files/archive.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ARCHIVE" {
		t.Errorf("/files/archive.tar.gz: %s %q", resp.Status, body)
	}
}
