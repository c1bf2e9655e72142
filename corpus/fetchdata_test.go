package corpus_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/corpus"
)

// The tests below run scripts/fetch-data.sh against a temporary cache; the
// download path is served by python3's http.server on 127.0.0.1.

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
}

// fetchData runs the script with env added to the environment and returns
// its combined output and exit code.
func fetchData(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join("..", "scripts", "fetch-data.sh")}, args...)...)
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

// hubFiles is a small SciFact look-alike in the hub's layout.
var hubFiles = map[string]string{
	"corpus.jsonl": `{"_id":"4983","title":"Microstructural development","text":"Alterations of the architecture."}` + "\n" +
		`{"_id":"5836","title":"Induction of myelodysplasia","text":"Myelodysplastic syndromes (MDS) are age-dependent."}` + "\n",
	"queries.jsonl":   `{"_id":"1","text":"0-dimensional biomaterials show inductive properties."}` + "\n",
	"qrels/test.tsv":  "query-id\tcorpus-id\tscore\n1\t4983\t1\n",
	"qrels/train.tsv": "query-id\tcorpus-id\tscore\n1\t5836\t1\n",
}

// serveHub starts python3 -m http.server on a free port of 127.0.0.1 with
// hubFiles under datasets/mteb/scifact/resolve/main/ and returns its base
// URL. The server is stopped at the end of the test.
func serveHub(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range hubFiles {
		writeFile(t, filepath.Join(root, "datasets", "mteb", "scifact", "resolve", "main", name), []byte(data))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()
	srv := exec.Command("python3", "-m", "http.server", "--bind", "127.0.0.1", "--directory", root, port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("http.server on %s did not start: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr
}

func gunzipFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(out)
}

func TestFetchDataDownload(t *testing.T) {
	needTools(t, "bash", "curl", "python3", "gzip")
	cache := t.TempDir()
	base := serveHub(t)
	env := []string{"MSRAG_CACHE=" + cache, "MSRAG_SHARED_DATA=" + filepath.Join(cache, "no-shared-copy"), "MSRAG_HF_ENDPOINT=" + base + "/"}

	if out, code := fetchData(t, env, "--check", "scifact"); code != 1 || !strings.Contains(out, "missing") {
		t.Fatalf("--check before fetching: exit %d, %q", code, out)
	}
	out, code := fetchData(t, env, "scifact")
	if code != 0 {
		t.Fatalf("fetch: exit %d: %s", code, out)
	}
	dest := filepath.Join(cache, "data", "scifact")
	if got := gunzipFile(t, filepath.Join(dest, "corpus.jsonl.gz")); got != hubFiles["corpus.jsonl"] {
		t.Errorf("corpus.jsonl.gz holds %q", got)
	}
	if got := gunzipFile(t, filepath.Join(dest, "queries.jsonl.gz")); got != hubFiles["queries.jsonl"] {
		t.Errorf("queries.jsonl.gz holds %q", got)
	}
	ds, err := corpus.OpenDataset(dest)
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := ds.ReadQrels("train")
	if err != nil || !reflect.DeepEqual(qrels, []corpus.Qrel{{QueryID: "1", DocID: "5836", Score: 1}}) {
		t.Errorf("train qrels %v, %v", qrels, err)
	}
	leftovers, _ := filepath.Glob(filepath.Join(cache, "data", ".scifact.tmp.*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary directories left: %v", leftovers)
	}

	// A second run, with the server gone, finds the set and does nothing.
	env[2] = "MSRAG_HF_ENDPOINT=http://127.0.0.1:1"
	if out, code := fetchData(t, env, "scifact"); code != 0 || !strings.Contains(out, "present") {
		t.Errorf("second fetch: exit %d, %q", code, out)
	}
	if out, code := fetchData(t, env, "--check", "scifact"); code != 0 || !strings.Contains(out, "present") {
		t.Errorf("--check after fetching: exit %d, %q", code, out)
	}
}

func TestFetchDataFailures(t *testing.T) {
	needTools(t, "bash", "curl", "python3", "gzip")
	base := serveHub(t)
	tests := []struct {
		name     string
		endpoint string
		args     []string
		code     int
		want     string
	}{
		{"no endpoint", "", []string{"scifact"}, 1, "set MSRAG_HF_ENDPOINT to the Hugging Face hub's base URL"},
		{"not served", base + "/nothing-here", []string{"scifact"}, 1, "downloading " + base + "/nothing-here/datasets/mteb/scifact/resolve/main/corpus.jsonl failed"},
		{"no source for qmsum", base, []string{"qmsum"}, 1, "qmsum has no download source"},
		{"unknown name", base, []string{"msmarco"}, 2, `unknown data set "msmarco"`},
		{"no name", base, nil, 2, "usage:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			env := []string{"MSRAG_CACHE=" + cache, "MSRAG_SHARED_DATA=" + filepath.Join(cache, "none"), "MSRAG_HF_ENDPOINT=" + tt.endpoint}
			out, code := fetchData(t, env, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.want) {
				t.Errorf("exit %d, output %q; want exit %d and %q", code, out, tt.code, tt.want)
			}
			if _, err := os.Stat(filepath.Join(cache, "data", "scifact")); err == nil {
				t.Error("a failed fetch left data behind")
			}
			if left, _ := filepath.Glob(filepath.Join(cache, "data", ".*")); len(left) > 0 {
				t.Errorf("temporary directories left: %v", left)
			}
		})
	}
}

func TestFetchDataSharedCopy(t *testing.T) {
	needTools(t, "bash", "gzip")
	shared := t.TempDir()
	dir := filepath.Join(shared, "qmsum")
	writeFile(t, filepath.Join(dir, "corpus.jsonl.gz"), []byte(`{"_id":"Bed003","title":"Bed003","text":"A: hello"}`+"\n"))
	writeFile(t, filepath.Join(dir, "queries.jsonl.gz"), []byte(`{"_id":"Bed003-s0","text":"what?"}`+"\n"))
	writeFile(t, filepath.Join(dir, "qrels", "dev.tsv"), []byte("query-id\tcorpus-id\tscore\nBed003-s0\tBed003\t1\n"))
	cache := t.TempDir()
	env := []string{"MSRAG_CACHE=" + cache, "MSRAG_SHARED_DATA=" + shared, "MSRAG_HF_ENDPOINT="}
	out, code := fetchData(t, env, "qmsum")
	if code != 0 || !strings.Contains(out, "copied from") {
		t.Fatalf("exit %d: %s", code, out)
	}
	ds, err := corpus.OpenDataset(filepath.Join(cache, "data", "qmsum"))
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := readAll(t, ds.Corpus, corpus.Options{})
	if err != nil || len(docs) != 1 || docs[0].ID != "Bed003" {
		t.Errorf("docs %v, %v", docs, err)
	}
}
