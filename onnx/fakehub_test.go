package onnx

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// hubCommit is the commit the fake hub serves for "main".
const hubCommit = "89abcdef0123456789abcdef0123456789abcdef"

// fakeHub serves model repositories as a Hugging Face hub does: the
// revision and tree APIs and the resolve URLs (.onnx and .safetensors
// files as LFS files, with their sha256), at hubCommit or "main".
type fakeHub struct {
	srv   *httptest.Server
	repos map[string]map[string][]byte // ORG/NAME -> path -> content

	mu       sync.Mutex
	requests []string
}

func newFakeHub(tb testing.TB, repos map[string]map[string][]byte) *fakeHub {
	tb.Helper()
	h := &fakeHub{repos: repos}
	h.srv = httptest.NewServer(h)
	tb.Cleanup(h.srv.Close)
	return h
}

// Requests returns the paths asked for so far.
func (h *fakeHub) Requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.requests)
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests = append(h.requests, r.URL.Path)
	h.mu.Unlock()
	p := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(p) >= 6 && p[0] == "api" && p[1] == "models" {
		files, ok := h.repos[p[2]+"/"+p[3]]
		if !ok || (p[5] != "main" && p[5] != hubCommit) {
			http.NotFound(w, r)
			return
		}
		switch p[4] {
		case "revision":
			json.NewEncoder(w).Encode(map[string]string{"sha": hubCommit})
		case "tree":
			json.NewEncoder(w).Encode(treeOf(files))
		default:
			http.NotFound(w, r)
		}
		return
	}
	if len(p) >= 5 && p[2] == "resolve" {
		files, ok := h.repos[p[0]+"/"+p[1]]
		body, found := files[strings.Join(p[4:], "/")]
		if !ok || !found || (p[3] != "main" && p[3] != hubCommit) {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
		return
	}
	http.NotFound(w, r)
}

// treeOf lists files as the tree API does.
func treeOf(files map[string][]byte) []map[string]any {
	var out []map[string]any
	for path, body := range files {
		e := map[string]any{"type": "file", "path": path, "size": len(body)}
		if strings.HasSuffix(path, ".onnx") || strings.HasSuffix(path, ".safetensors") {
			sum := sha256.Sum256(body)
			e["oid"] = "0000000000000000000000000000000000000000"
			e["lfs"] = map[string]any{"oid": hex.EncodeToString(sum[:]), "size": len(body), "pointerSize": 134}
		} else {
			b := sha1.New()
			fmt.Fprintf(b, "blob %d\x00", len(body))
			b.Write(body)
			e["oid"] = hex.EncodeToString(b.Sum(nil))
		}
		out = append(out, e)
	}
	return out
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
