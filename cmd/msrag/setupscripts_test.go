package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/testfiles"
)

// The tests below run scripts/setup.sh and scripts/setup-gpu.sh as make setup
// does, each against a temporary cache.

// runScript runs bash SCRIPT ARGS in the repository root with env added and
// returns its combined output and exit code.
func runScript(t *testing.T, env []string, script string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join("scripts", script)}, args...)...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestSetupNamesMissingTools: with none of the commands it runs on PATH,
// make setup's script names each one, with what it is for, and stops before
// installing anything.
func TestSetupNamesMissingTools(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is missing")
	}
	bin := t.TempDir() // what the script needs before its check: dirname
	for _, tool := range []string{"dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s is missing", tool)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	cacheDir := filepath.Join(t.TempDir(), "cache")
	cmd := exec.Command(bash, filepath.Join("scripts", "setup.sh"))
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir(), "MSRAG_CACHE=" + cacheDir}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1:\n%s", err, out)
	}
	for _, tool := range []string{"go: builds msrag", "g++:", "npm:", "mvn:", "curl:", "python3:", "unzip:", "sha256sum:"} {
		if !strings.Contains(string(out), "tool       missing  "+tool) {
			t.Errorf("the output does not name %q as missing:\n%s", tool, out)
		}
	}
	if !strings.Contains(string(out), "setup: missing go gcc g++ npm mvn curl tar gzip sha256sum python3 unzip") {
		t.Errorf("no closing line naming every missing command:\n%s", out)
	}
	if _, err := os.Stat(cacheDir); err == nil {
		t.Errorf("setup created %s before stopping", cacheDir)
	}
}

// faissHeaders returns the FAISS 1.15.0 headers make setup installed in the
// cache (the directory above faiss/), skipping outside CI when they are not
// there.
func faissHeaders(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(cache.Dir(), "gpu", "headers", "faiss")
	if _, err := os.Stat(filepath.Join(dir, "faiss", "Index.h")); err != nil {
		if testfiles.UnderCI() {
			t.Fatalf("FAISS's headers absent under CI: %v", err)
		}
		t.Skipf("FAISS's headers absent (make setup installs them): %v", err)
	}
	return dir
}

// archive is FAISS's release archive as GitHub lays it out (faiss-1.15.0/
// over the source tree), made of the headers under dir with edit applied to
// each file's path and contents (it returns false to leave a file out), the
// files of extra, and a file outside faiss/.
func archive(t *testing.T, dir string, edit func(path string, data []byte) ([]byte, bool), extra map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: "faiss-1.15.0/" + name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	err := filepath.WalkDir(filepath.Join(dir, "faiss"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if data, ok := edit(filepath.ToSlash(rel), data); ok {
			add(filepath.ToSlash(rel), data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range extra {
		add(name, []byte(data))
	}
	add("tests/test_index.cpp", []byte("int main() {}\n"))
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// TestFaissHeadersFromArchive: FAISS's headers are taken from the release
// archive at MSRAG_FAISS_ARCHIVE_URL when every header matches
// scripts/faiss-headers-v1.15.0.sha256; an archive with a changed, a
// missing or an added header is refused, naming each, and installs nothing.
func TestFaissHeadersFromArchive(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "tar", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is missing", tool)
		}
	}
	src := faissHeaders(t)
	as := func(path string, data []byte) ([]byte, bool) { return data, true }
	archives := map[string][]byte{
		"/good.tar.gz": archive(t, src, as, nil),
		"/changed.tar.gz": archive(t, src, func(path string, data []byte) ([]byte, bool) {
			if path == "faiss/IndexFlat.h" {
				return append(bytes.Clone(data), "// changed\n"...), true
			}
			return data, path != "faiss/utils/Heap.h"
		}, map[string]string{"faiss/Extra.h": "#pragma once\n"}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if data, ok := archives[r.URL.Path]; ok {
			w.Write(data)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	env := func(cacheDir, name string) []string {
		return []string{"MSRAG_CACHE=" + cacheDir, "MSRAG_FAISS_HEADERS=", "MSRAG_FAISS_ARCHIVE_URL=" + srv.URL + name}
	}

	bad := t.TempDir()
	out, code := runScript(t, env(bad, "/changed.tar.gz"), "setup-gpu.sh", "--faiss-headers")
	if code != 1 || !strings.Contains(out, "faiss/IndexFlat.h: changed") || !strings.Contains(out, "faiss/utils/Heap.h: missing") ||
		!strings.Contains(out, "faiss/Extra.h: not in the manifest") ||
		!strings.Contains(out, "refused") {
		t.Errorf("a changed archive: exit %d, want 1 naming faiss/IndexFlat.h (changed), faiss/utils/Heap.h (missing) and faiss/Extra.h (added):\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(bad, "gpu", "headers", "faiss")); err == nil {
		t.Errorf("a refused archive left headers installed")
	}
	out, code = runScript(t, env(bad, "/absent.tar.gz"), "setup-gpu.sh", "--faiss-headers")
	if code != 1 || !strings.Contains(out, srv.URL+"/absent.tar.gz") || !strings.Contains(out, "MSRAG_FAISS_ARCHIVE_URL") {
		t.Errorf("an archive not served: exit %d, want 1 naming the URL and the variable:\n%s", code, out)
	}

	good := t.TempDir()
	out, code = runScript(t, env(good, "/good.tar.gz"), "setup-gpu.sh", "--faiss-headers")
	if code != 0 || !strings.Contains(out, "from "+srv.URL+"/good.tar.gz") {
		t.Fatalf("the release's archive: exit %d:\n%s", code, out)
	}
	installed := filepath.Join(good, "gpu", "headers", "faiss")
	if _, err := os.Stat(filepath.Join(installed, "faiss", "gpu", "StandardGpuResources.h")); err != nil {
		t.Errorf("headers not installed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(installed, "tests")); err == nil {
		t.Errorf("files outside faiss/ were installed")
	}
	if out, code := runScript(t, env(good, "/absent.tar.gz"), "setup-gpu.sh", "--check", "--faiss-headers"); code != 0 || !strings.Contains(out, "present") {
		t.Errorf("--check after installing: exit %d:\n%s", code, out)
	}
	// A header changed in place is found by the next run, which installs again.
	if err := os.WriteFile(filepath.Join(installed, "faiss", "Index.h"), []byte("// not FAISS\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runScript(t, env(good, "/absent.tar.gz"), "setup-gpu.sh", "--check", "--faiss-headers"); code != 1 || !strings.Contains(out, "missing") {
		t.Errorf("--check with a changed header: exit %d, want 1:\n%s", code, out)
	}
}
