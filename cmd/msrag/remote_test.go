package main

import (
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/tokenizer"
)

// cliServer is an OpenAI-compatible server for CLI tests: a text's vector
// is a bag of its words hashed into 16 dims (so a query finds the document
// that shares its words), its token count is the BERT tokenizer's, and it
// records the Authorization headers it gets.
type cliServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newCLIServer(t *testing.T, tok *tokenizer.Tokenizer) *cliServer {
	s := &cliServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auths = append(s.auths, r.Header.Get("Authorization"))
		s.mu.Unlock()
		var req struct {
			Input     []string `json:"input"`
			InputType string   `json:"input_type"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		var data []map[string]any
		tokens := 0
		for i, t := range req.Input {
			v := make([]float32, 16)
			for _, word := range strings.Fields(strings.ToLower(t)) {
				h := fnv.New32a()
				h.Write([]byte(strings.Trim(word, ".,")))
				v[h.Sum32()%16]++
			}
			data = append(data, map[string]any{"index": i, "embedding": v})
			tokens += tok.Count(t) + 2
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": "bag-of-words", "usage": map[string]int{"prompt_tokens": tokens}})
	}))
	t.Cleanup(s.Close)
	return s
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
	if man.Model.Name != "openai:bag-of-words" || man.Model.Remote.Endpoints != srv.URL+"/v1" || man.Model.Remote.TokenizerOrigin != "other" {
		t.Errorf("manifest model %+v", man.Model)
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
	for _, s := range []*cliServer{srv, other} {
		for _, a := range s.auths {
			if a != "Bearer "+key {
				t.Fatalf("Authorization %q, want the key from $%s", a, remote.APIKeyEnv)
			}
		}
	}
	if len(other.auths) == 0 {
		t.Error("search did not use --endpoints")
	}

	// A server model without --tokenizer is a usage error.
	code, _, stderr = runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "x"), "--model", "openai:"+srv.URL+"/v1")
	if code != exitUsage || !strings.Contains(stderr, "--tokenizer") {
		t.Errorf("no --tokenizer: exit %d, %s", code, stderr)
	}
}
