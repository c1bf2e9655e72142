package main

import (
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/remote/remotetest"
	"github.com/msrag/msrag/tokenizer"
)

// newCLIServer starts an OpenAI-compatible server for CLI tests: a text's
// vector is a bag of its words hashed into 16 dims (so a query finds the
// document that shares its words), its token count is the BERT tokenizer's.
func newCLIServer(t *testing.T, tok *tokenizer.Tokenizer) *remotetest.Server {
	s := remotetest.NewServer(remotetest.Config{Model: "bag-of-words", Dims: 16, Embed: bagOfWords,
		Tokens: func(text string) int { return tok.Count(text) + 2 }})
	t.Cleanup(s.Close)
	return s
}

// bagOfWords hashes the words of text into 16 dims.
func bagOfWords(text, _ string) []float32 {
	v := make([]float32, 16)
	for _, word := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(word, ".,")))
		v[h.Sum32()%16]++
	}
	return v
}

func TestIndexSearchRemoteCLI(t *testing.T) {
	dir := t.TempDir()
	tokPath := testfiles.BERTUncased(t, dir)
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := newCLIServer(t, tok)
	const key = "sk-test-secret-123"
	t.Setenv(remote.APIKeyEnv, key)
	corpusPath, out := writeCorpus(t, dir), filepath.Join(dir, "idx")
	code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", out, "--windows", "4,8",
		"--model", "openai:"+srv.URL+"/v1#bag-of-words", "--tokenizer", tokPath, "--passage-prefix", "passage: ",
		"--query-prefix", "query: ", "--concurrency", "3", "--quiet")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "index: token counts: ") || strings.Contains(stderr, key) {
		t.Errorf("index stderr: %s", stderr)
	}
	man, err := msrag.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := remote.ParseOrigin(embed.Origin{Kind: man.Model.Origin.Kind, Params: string(man.Model.Origin.Params), Access: string(man.Model.Origin.Access)})
	if err != nil || man.Model.Name != "openai:bag-of-words" || !slices.Equal(rec.Endpoints, []string{srv.URL + "/v1"}) || rec.ServerTokenizer {
		t.Errorf("manifest model %+v: %+v, %v", man.Model, rec, err)
	}
	if raw, _ := os.ReadFile(filepath.Join(out, "manifest.json")); strings.Contains(string(raw), key) {
		t.Error("the API key is in the manifest")
	}

	// Search at another server of the same model.
	other := newCLIServer(t, tok)
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee drinking and heart disease\n"), 0o644)
	code, stdout, stderr := runCLI(t, "", "search", "--index", out, "--queries", queries, "--k", "1", "--endpoints", other.URL+"/v1")
	if code != 0 || !strings.HasPrefix(stdout, "q1 Q0 c 1 ") {
		t.Errorf("search: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	for _, s := range []*remotetest.Server{srv, other} {
		for _, r := range s.Received() {
			if r.Auth != "Bearer "+key {
				t.Fatalf("Authorization %q, want the key from $%s", r.Auth, remote.APIKeyEnv)
			}
		}
	}
	if other.Requests() == 0 {
		t.Error("search did not use --endpoints")
	}

	// A server model without --tokenizer is a usage error.
	code, _, stderr = runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "x"), "--model", "openai:"+srv.URL+"/v1")
	if code != exitUsage || !strings.Contains(stderr, "--tokenizer") {
		t.Errorf("no --tokenizer: exit %d, %s", code, stderr)
	}
}

// TestRemoteIndexSearchesFromElsewhere builds an index with --tokenizer
// given relative to the working directory and searches it from another: the
// manifest records the tokenizer's absolute path.
func TestRemoteIndexSearchesFromElsewhere(t *testing.T) {
	dir := t.TempDir()
	tokPath := testfiles.BERTUncased(t, dir)
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := newCLIServer(t, tok)
	corpusPath := writeCorpus(t, dir)
	t.Chdir(dir)
	code, _, stderr := runCLI(t, "", "index", "--corpus", filepath.Base(corpusPath), "--out", "idx", "--windows", "4,8",
		"--model", "openai:"+srv.OpenAIURL(), "--tokenizer", filepath.Base(tokPath), "--quiet")
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	man, err := msrag.ReadManifest("idx")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := remote.ParseOrigin(embed.Origin{Kind: man.Model.Origin.Kind, Params: string(man.Model.Origin.Params), Access: string(man.Model.Origin.Access)})
	if err != nil || !filepath.IsAbs(rec.Tokenizer) {
		t.Errorf("manifest tokenizer %q (%v), want an absolute path", rec.Tokenizer, err)
	}
	other := t.TempDir()
	queries := filepath.Join(other, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee drinking and heart disease\n"), 0o644)
	t.Chdir(other)
	code, stdout, stderr := runCLI(t, "", "search", "--index", filepath.Join(dir, "idx"), "--queries", "q.tsv", "--k", "1")
	if code != 0 || !strings.HasPrefix(stdout, "q1 Q0 c 1 ") {
		t.Errorf("search from another directory: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
}
