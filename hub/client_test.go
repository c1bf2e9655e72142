package hub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/hub"
)

// newClient returns a client for endpoint.
func newClient(t testing.TB, endpoint string) *hub.Client {
	t.Helper()
	c, err := hub.NewClient(hub.Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestList lists a repository over several pages and checks every entry.
func TestList(t *testing.T) {
	files := parquetRepo(t)
	h := newFakeHub(t, "mteb/small", files)
	h.pageSize = 2
	c := newClient(t, h.URL())
	got, err := c.List(context.Background(), hub.Repo{ID: "mteb/small", Dataset: true}, commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Fatalf("listed %d files, want %d: %+v", len(got), len(files), got)
	}
	for _, f := range got {
		data, ok := files[f.Path]
		switch {
		case !ok:
			t.Errorf("listed %s, which is no file", f.Path)
		case f.Size != int64(len(data)):
			t.Errorf("%s: size %d, want %d", f.Path, f.Size, len(data))
		case h.lfs(f.Path) && f.SHA256 != sha(data):
			t.Errorf("%s: sha256 %q, want %s", f.Path, f.SHA256, sha(data))
		case !h.lfs(f.Path) && (f.SHA256 != "" || f.OID != blobID(data)):
			t.Errorf("%s: %+v, want git blob id %s and no sha256", f.Path, f, blobID(data))
		}
	}
	if n := len(h.Requests()); n != 5 { // 10 entries (7 files, 3 directories), 2 a page
		t.Errorf("%d requests for the listing, want 5", n)
	}
}

// TestCommit resolves a branch to its commit, and fails on an unknown one.
func TestCommit(t *testing.T) {
	h := newFakeHub(t, "mteb/small", jsonlRepo())
	c := newClient(t, h.URL())
	repo := hub.Repo{ID: "mteb/small", Dataset: true}
	if got, err := c.Commit(context.Background(), repo, "main"); err != nil || got != commit {
		t.Errorf("Commit(main) = %q, %v; want %s", got, err, commit)
	}
	_, err := c.Commit(context.Background(), repo, "no-such-branch")
	if !errors.Is(err, hub.ErrNotFound) || !strings.Contains(err.Error(), "/api/datasets/mteb/small/revision/no-such-branch") {
		t.Errorf("unknown branch: %v, want ErrNotFound naming the URL", err)
	}
}

// TestDownloadUnlisted downloads from a model repository without a listing,
// as onnx does.
func TestDownloadUnlisted(t *testing.T) {
	h := newFakeHub(t, "intfloat/e5-small", map[string][]byte{"onnx/model.onnx": []byte("MODEL")})
	h.kind = ""
	c := newClient(t, h.URL()+"/")
	repo := hub.Repo{ID: "intfloat/e5-small"}
	dir := t.TempDir()
	dst := filepath.Join(dir, "model.onnx")
	sum, err := c.Download(context.Background(), repo, "main", hub.Unlisted("onnx/model.onnx"), dst)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "MODEL" || sum != sha([]byte("MODEL")) {
		t.Errorf("downloaded %q with sha256 %s", got, sum)
	}
	_, err = c.Download(context.Background(), repo, "main", hub.Unlisted("model.onnx"), filepath.Join(dir, "other"))
	if !errors.Is(err, hub.ErrNotFound) || !strings.Contains(err.Error(), "model intfloat/e5-small@main: model.onnx: GET "+h.URL()+"/intfloat/e5-small/resolve/main/model.onnx: 404 Not Found") {
		t.Errorf("missing file: %v", err)
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("%s holds %v, want model.onnx alone", dir, got)
	}
}

// TestFileURL checks that the repository, revision and path are escaped.
func TestFileURL(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1/mirror/")
	got := c.FileURL(hub.Repo{ID: "org/a b", Dataset: true}, "refs/pr/1", "dir x/f#1.parquet")
	want := "http://127.0.0.1:1/mirror/datasets/org/a%20b/resolve/refs%2Fpr%2F1/dir%20x/f%231.parquet"
	if got != want {
		t.Errorf("FileURL = %s\nwant      %s", got, want)
	}
}

// TestBadRepo checks that a malformed repository id is refused before any request.
func TestBadRepo(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1")
	for _, id := range []string{"", "org", "org/", "/name", "a/b/c", "../x", "org/.."} {
		if _, err := c.List(context.Background(), hub.Repo{ID: id}, "main"); !errors.Is(err, hub.ErrName) {
			t.Errorf("List(%q): %v, want ErrName", id, err)
		}
	}
}
