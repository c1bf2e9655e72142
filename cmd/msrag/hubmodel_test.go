package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/internal/hubserve"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/mteb"
	"github.com/msrag/msrag/onnx"
)

// hubRepo is one repository revision the stand-in hub serves.
type hubRepo struct {
	kind   hubserve.Kind
	id     string // ORG/NAME
	commit string // which refs/main names
	files  map[string]hubserve.File
}

// serveHub starts the stand-in hub (internal/hubserve) serving repos, points
// msrag at it ($MSRAG_HF_ENDPOINT, no token), and returns its base URL.
func serveHub(t testing.TB, repos ...hubRepo) (string, *hubserve.Server) {
	t.Helper()
	root := t.TempDir()
	for _, r := range repos {
		if err := hubserve.AddRepo(root, r.kind, r.id, r.commit, r.files); err != nil {
			t.Fatal(err)
		}
	}
	h := hubserve.New(hubserve.Config{Root: root})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Setenv(hub.EnvEndpoint, srv.URL)
	t.Setenv(hub.EnvToken, "")
	t.Setenv(hub.EnvHome, t.TempDir())
	return srv.URL, h
}

// mtebLFS is the .gitattributes of mteb's dataset repositories: their
// JSONL and Parquet files are stored with Git LFS.
const mtebLFS = "*.jsonl filter=lfs diff=lfs merge=lfs -text\n*.parquet filter=lfs diff=lfs merge=lfs -text\n"

// mtebDataset returns testdata/hub/DIR's files as an MTEB task's dataset
// repository holds them: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv,
// README.md, and the .gitattributes that stores the JSONL files with LFS.
func mtebDataset(t testing.TB, dir string) map[string]hubserve.File {
	t.Helper()
	files, err := hubserve.FilesIn(filepath.Join("testdata", "hub", dir))
	if err != nil {
		t.Fatal(err)
	}
	files[".gitattributes"] = hubserve.File{Data: []byte(mtebLFS)}
	return files
}

// sciFactSubset returns mteb/scifact's files for the first q test queries of
// the cache's SciFact (in qrels order), the documents they judge and the
// first others documents besides, in the dataset's published layout.
func sciFactSubset(t testing.TB, q, others int) map[string]hubserve.File {
	t.Helper()
	src := testfiles.Dataset(t, "scifact")
	qrels, err := os.ReadFile(filepath.Join(src, "qrels", "test.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(qrels), "\n")
	keptQrels := lines[0] // the header
	queries, judged := map[string]bool{}, map[string]bool{}
	for _, l := range lines[1:] {
		f := strings.Split(strings.TrimSpace(l), "\t")
		if len(f) != 3 || (!queries[f[0]] && len(queries) == q) {
			continue
		}
		queries[f[0]], judged[f[1]] = true, true
		keptQrels += l
	}
	keep := func(name string, want func(id string) bool) []byte {
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(testfiles.ReadGzip(t, filepath.Join(src, name+".gz"))))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec struct {
				ID string `json:"_id"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if want(rec.ID) {
				out.Write(sc.Bytes())
				out.WriteByte('\n')
			}
		}
		return out.Bytes()
	}
	n := 0
	return map[string]hubserve.File{
		".gitattributes": {Data: []byte(mtebLFS)},
		"README.md":      {Data: []byte("# SciFact\n\nThe first test queries of mteb/scifact and their documents.\n")},
		"qrels/test.tsv": {Data: []byte(keptQrels)},
		"queries.jsonl":  {Data: keep("queries.jsonl", func(id string) bool { return queries[id] })},
		"corpus.jsonl": {Data: keep("corpus.jsonl", func(id string) bool {
			if judged[id] {
				return true
			}
			n++
			return n <= others
		})},
	}
}

// emptyCache points msrag's cache at an empty directory, keeping the ONNX
// Runtime library of the cache it had, and returns it; what a test takes
// from the cache it had (testfiles) it takes before.
func emptyCache(t *testing.T) string {
	t.Helper()
	lib := testfiles.Need(t, onnx.LibraryPath(), "the ONNX Runtime library", "make setup installs it")
	t.Setenv(onnx.EnvORTLib, lib)
	dir := t.TempDir()
	t.Setenv(hub.EnvCache, dir)
	t.Setenv(hub.EnvOffline, "")
	return dir
}

// minilmCommit is the commit of the stand-in's model repositories.
const minilmCommit = "1111111111111111111111111111111111111111"

// sciFactHub serves mteb/scifact (10 test queries of the cache's SciFact,
// the documents they judge and others more) at the revision mteb pins, and
// all-MiniLM-L6-v2's hub repository (testfiles.MiniLMRepo: the
// sentence-transformers save and an onnx/model.onnx) as each of models.
func sciFactHub(t *testing.T, others int, models map[string]map[string]string) *hubserve.Server {
	t.Helper()
	task, _ := mteb.Get("SciFact")
	repos := []hubRepo{{hubserve.Datasets, "mteb/scifact", task.Revision, sciFactSubset(t, 10, others)}}
	for id, over := range models {
		repos = append(repos, hubRepo{hubserve.Models, id, minilmCommit, testfiles.MiniLMRepo(t, over)})
	}
	_, h := serveHub(t, repos...)
	return h
}

// TestEvalHubModelMTEB runs msrag eval --dataset mteb:SciFact --model
// hf:sentence-transformers/all-MiniLM-L6-v2 as a new user does, with an
// empty cache, against the stand-in hub: the dataset is fetched at the
// revision mteb pins and the model on first use, with the 256 tokens of its
// sentence_bert_config.json, which the default windows then fit; the run is
// named as the task in the MTEB files; a second run, offline, asks the hub
// nothing.
func TestEvalHubModelMTEB(t *testing.T) {
	const model = "hf:sentence-transformers/all-MiniLM-L6-v2"
	h := sciFactHub(t, 10, map[string]map[string]string{"sentence-transformers/all-MiniLM-L6-v2": nil})
	cache := emptyCache(t)
	out := t.TempDir()
	code, _, stderr := runCLI(t, "", "eval", "--dataset", "mteb:SciFact", "--model", model, "--out", out)
	if code != exitOK {
		t.Fatalf("eval: code %d\n%s", code, stderr)
	}
	for _, want := range []string{"fetching it (first use) from the hub", "mteb/scifact@" + mtebRevision(t, "SciFact") + ": fetched into",
		"gives sentence-transformers/all-MiniLM-L6-v2 no prompts", "windows 100,200,254, which fit " + model} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	info, err := onnx.ReadModelInfo(filepath.Join(cache, "models", "hf--sentence-transformers--all-MiniLM-L6-v2"))
	if err != nil {
		t.Fatal(err)
	}
	if info.MaxTokens != 256 || info.Sources["max_tokens"] != "sentence_bert_config.json max_seq_length" || info.Revision != minilmCommit || info.Sources[onnx.ModelFile] != "onnx/model.onnx" {
		t.Errorf("msrag-model.json: max tokens %d, revision %s, sources %v", info.MaxTokens, info.Revision, info.Sources)
	}
	e := readEval(t, out)
	if e.Model.Name != model || e.Model.MaxTokens != 256 || !slices.Equal(e.Windows, []int{100, 200, 254}) || e.Split != "test" || e.Queries != 10 ||
		e.MTEB == nil || e.MTEB.Task != "SciFact" || e.MTEB.DatasetRevision != mtebRevision(t, "SciFact") {
		t.Errorf("model %+v, windows %v, split %s, %d queries, mteb %+v", e.Model, e.Windows, e.Split, e.Queries, e.MTEB)
	}
	asked := h.Requests()
	code, _, stderr = runCLI(t, "", "eval", "--quiet", "--offline", "--dataset", "mteb:SciFact", "--model", model, "--index", filepath.Join(out, "index"), "--out", t.TempDir())
	if code != exitOK || h.Requests() != asked {
		t.Errorf("offline, present: code %d, %d requests\n%s", code, h.Requests()-asked, stderr)
	}
}

// mtebRevision is the dataset revision mteb pins for task.
func mtebRevision(t *testing.T, task string) string {
	t.Helper()
	tk, ok := mteb.Get(task)
	if !ok {
		t.Fatalf("mteb has no task %s", task)
	}
	return tk.Revision
}

// TestEvalMTEBPromptsOfHubModel runs mteb:SciFact with hub models whose
// prompts come from two places, one stand-in hub serving the models and the
// dataset: mteb's model metadata, which gives intfloat/multilingual-e5-small
// "query: " and "passage: " (the stand-in serves all-MiniLM-L6-v2's files
// under that name, without prompts of their own), and
// config_sentence_transformers.json, in a copy whose prompts are {"query":
// "query: ", "document": "passage: "}. eval says which source won, the
// index records exactly those prefixes, and the two runs are the same run,
// which differs from the run without prompts.
func TestEvalMTEBPromptsOfHubModel(t *testing.T) {
	const plain, mtebNamed, configured = "sentence-transformers/all-MiniLM-L6-v2", "intfloat/multilingual-e5-small", "stand-in/all-MiniLM-L6-v2-prompts"
	prompts := `{"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": null}`
	sciFactHub(t, 5, map[string]map[string]string{plain: nil, mtebNamed: nil, configured: {"config_sentence_transformers.json": prompts}})
	cache := emptyCache(t)
	wantSource := map[string]string{
		plain:      "gives " + plain + " no prompts",
		mtebNamed:  "mteb 2.26.24's model metadata of " + mtebNamed + " for SciFact",
		configured: "gives " + configured + " no prompts: those of its sentence-transformers configuration apply",
	}
	runs := map[string]string{}
	for _, model := range []string{plain, mtebNamed, configured} {
		out := t.TempDir()
		code, _, stderr := runCLI(t, "", "eval", "--dataset", "mteb:SciFact", "--model", "hf:"+model, "--windows", "128", "--no-lexical", "--configs", "windows", "--out", out)
		if code != exitOK {
			t.Fatalf("eval %s: code %d\n%s", model, code, stderr)
		}
		if !strings.Contains(stderr, "eval: prompts: ") || !strings.Contains(stderr, wantSource[model]) {
			t.Errorf("%s: stderr does not say %q:\n%s", model, wantSource[model], stderr)
		}
		m, err := msrag.ReadManifest(filepath.Join(out, "index"))
		if err != nil {
			t.Fatal(err)
		}
		if q, p := m.Model.QueryPrefix, m.Model.PassagePrefix; (model == plain) != (q == "" && p == "") || (model != plain && (q != "query: " || p != "passage: ")) {
			t.Errorf("%s: the index records prefixes %q, %q", model, q, p)
		}
		run, err := os.ReadFile(filepath.Join(out, "runs", "w128.trec"))
		if err != nil {
			t.Fatal(err)
		}
		runs[model] = string(run)
	}
	for entry, want := range map[string]string{"hf--stand-in--all-MiniLM-L6-v2-prompts": "query: ", "hf--intfloat--multilingual-e5-small": ""} {
		info, err := onnx.ReadModelInfo(filepath.Join(cache, "models", entry))
		if err != nil || info.QueryPrefix != want || info.PassagePrefix != strings.ReplaceAll(want, "query", "passage") {
			t.Errorf("msrag-model.json of %s: prefixes %q, %q (%v)", entry, info.QueryPrefix, info.PassagePrefix, err)
		}
	}
	if runs[mtebNamed] != runs[configured] {
		t.Errorf("the run with mteb's prompts differs from the run with the same prompts from the configuration")
	}
	if runs[plain] == runs[mtebNamed] {
		t.Errorf("the run with prompts is the run without")
	}
}
