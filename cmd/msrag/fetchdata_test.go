package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/hubserve"
)

// The tests below run scripts/fetch-data.sh against a temporary cache, with
// this test binary as its msrag (MSRAG_BIN, MSRAG_TEST_MAIN) and the hub
// stand-in on a loopback port as the hub.

// scifactFiles is a small SciFact look-alike in the published layout of
// mteb/scifact: JSONL corpus and queries (under LFS), TSV qrels.
var scifactFiles = map[string]string{
	".gitattributes": "*.jsonl filter=lfs diff=lfs merge=lfs -text\n",
	"README.md":      "# scifact\n",
	"corpus.jsonl": `{"_id": "4983", "title": "Microstructural development", "text": "Alterations of the architecture."}` + "\n" +
		`{"_id": "5836", "title": "Induction of myelodysplasia", "text": "Myelodysplastic syndromes (MDS) are age-dependent."}` + "\n",
	"queries.jsonl":   `{"_id": "1", "text": "0-dimensional biomaterials show inductive properties."}` + "\n",
	"qrels/test.tsv":  "query-id\tcorpus-id\tscore\n1\t4983\t1\n",
	"qrels/train.tsv": "query-id\tcorpus-id\tscore\n1\t5836\t1\n",
}

// scifactHub serves scifactFiles as mteb/scifact at its pinned revision and
// returns the base URL.
func scifactHub(t *testing.T) string {
	t.Helper()
	files := map[string]hubserve.File{}
	for name, data := range scifactFiles {
		files[name] = hubserve.File{Data: []byte(data)}
	}
	url, _ := serveHub(t, hubRepo{hubserve.Datasets, "mteb/scifact", mtebRevision(t, "SciFact"), files})
	return url
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fetchData runs scripts/fetch-data.sh with a cache, a hub endpoint and a
// mirror ("" for none), and returns its combined output and exit code.
func fetchData(t *testing.T, cache, endpoint, mirror string, args ...string) (string, int) {
	t.Helper()
	for _, tool := range []string{"bash", "gzip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "HF_") && name != hub.EnvEndpoint && name != "MSRAG_DATA_MIRROR" && name != "MSRAG_CACHE" {
			env = append(env, kv)
		}
	}
	env = append(env, "MSRAG_TEST_MAIN=1", "MSRAG_BIN="+os.Args[0], "MSRAG_CACHE="+cache,
		hub.EnvHFEndpoint+"="+endpoint, hub.EnvHome+"="+t.TempDir())
	if mirror != "" {
		env = append(env, "MSRAG_DATA_MIRROR="+mirror)
	}
	cmd := exec.Command("bash", append([]string{filepath.Join("..", "..", "scripts", "fetch-data.sh")}, args...)...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
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

// TestFetchDataFromHub: the script fetches mteb/scifact with msrag data fetch
// from the hub $HF_ENDPOINT names, lays it out in CACHE/data/scifact, and on a
// second run (the hub gone) finds it present.
func TestFetchDataFromHub(t *testing.T) {
	cache := t.TempDir()
	base := scifactHub(t)
	if out, code := fetchData(t, cache, base, "", "--check", "scifact"); code != 1 || !strings.Contains(out, "missing") {
		t.Fatalf("--check before fetching: exit %d, %q", code, out)
	}
	out, code := fetchData(t, cache, base, "", "scifact")
	if code != 0 {
		t.Fatalf("fetch: exit %d: %s", code, out)
	}
	dest := filepath.Join(cache, "data", "scifact")
	for name, gz := range map[string]string{"corpus.jsonl": "corpus.jsonl.gz", "queries.jsonl": "queries.jsonl.gz"} {
		if got := gunzipFile(t, filepath.Join(dest, gz)); got != scifactFiles[name] {
			t.Errorf("%s holds %q, want %q", gz, got, scifactFiles[name])
		}
	}
	ds, err := corpus.OpenDataset(dest)
	if err != nil {
		t.Fatal(err)
	}
	qrels, err := ds.ReadQrels("train")
	if err != nil || !reflect.DeepEqual(qrels, []corpus.Qrel{{QueryID: "1", DocID: "5836", Score: 1}}) {
		t.Errorf("train qrels %v, %v", qrels, err)
	}
	if left, _ := filepath.Glob(filepath.Join(cache, "data", ".*")); len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
	}
	if out, code := fetchData(t, cache, "http://127.0.0.1:1", "", "scifact"); code != 0 || !strings.Contains(out, "present") {
		t.Errorf("second fetch: exit %d, %q", code, out)
	}
	if out, code := fetchData(t, cache, "http://127.0.0.1:1", "", "--check", "scifact"); code != 0 || !strings.Contains(out, "present") {
		t.Errorf("--check after fetching: exit %d, %q", code, out)
	}
}

// TestFetchDataMirror: a set in MSRAG_DATA_MIRROR is copied, scifact
// included, without asking the hub.
func TestFetchDataMirror(t *testing.T) {
	mirror := t.TempDir()
	for _, name := range []string{"qmsum", "scifact"} {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		io.WriteString(zw, `{"_id": "Bed003", "title": "Bed003", "text": "A: hello"}`+"\n")
		zw.Close()
		writeTestFile(t, filepath.Join(mirror, name, "corpus.jsonl.gz"), gz.String())
		writeTestFile(t, filepath.Join(mirror, name, "queries.jsonl.gz"), gz.String())
		writeTestFile(t, filepath.Join(mirror, name, "qrels", "dev.tsv"), "query-id\tcorpus-id\tscore\nBed003\tBed003\t1\n")
	}
	cache := t.TempDir()
	out, code := fetchData(t, cache, "http://127.0.0.1:1", mirror, "qmsum", "scifact")
	if code != 0 || strings.Count(out, "copied from the mirror") != 2 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, name := range []string{"qmsum", "scifact"} {
		if _, err := corpus.OpenDataset(filepath.Join(cache, "data", name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestFetchDataFailures: what the script says, with what exit code, and that
// it leaves nothing behind.
func TestFetchDataFailures(t *testing.T) {
	base := scifactHub(t)
	emptyMirror := t.TempDir()
	rev, _ := hub.PinnedRevision("scifact")
	for _, tc := range []struct {
		name, endpoint, mirror string
		args                   []string
		code                   int
		want                   []string
	}{
		{"hub unreachable", "http://127.0.0.1:1", "", []string{"scifact"}, 1,
			[]string{"msrag data fetch hf:mteb/scifact failed", "GET http://127.0.0.1:1/api/datasets/mteb/scifact/tree/" + rev}},
		{"qmsum without a mirror", base, "", []string{"qmsum"}, 1, []string{"qmsum exists only in a local mirror", "set MSRAG_DATA_MIRROR"}},
		{"qmsum not in the mirror", base, emptyMirror, []string{"qmsum-lembed"}, 1, []string{"MSRAG_DATA_MIRROR=" + emptyMirror + " has no qmsum-lembed/"}},
		{"an unknown name fetches nothing", base, "", []string{"scifact", "msmarco"}, 2, []string{`unknown data set "msmarco"`}},
		{"no name", base, "", nil, 2, []string{"usage:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			out, code := fetchData(t, cache, tc.endpoint, tc.mirror, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output %q lacks %q", out, w)
				}
			}
			if entries, _ := os.ReadDir(filepath.Join(cache, "data")); len(entries) != 0 {
				t.Errorf("a failed fetch left %v", entries)
			}
		})
	}
}
