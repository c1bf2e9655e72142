package msrag

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/remote/remotetest"
)

// newEmbedServer starts an OpenAI-compatible server for build tests: it
// embeds with a Hash embedder (so a text near a query scores high), counts
// tokens exactly as the remote Embedder does, and answers after a random
// short delay (so that overlapping calls finish out of order).
func newEmbedServer(tb testing.TB, model string) *remotetest.Server {
	tb.Helper()
	hash := testEmbedder(tb)
	tok := hash.Tokenizer()
	srv := remotetest.NewServer(remotetest.Config{
		Model: model, Dims: hash.Spec().Dims,
		Embed: func(text, _ string) []float32 {
			v, _ := hash.Embed(context.Background(), []string{text}, embed.Passage)
			return v
		},
		Tokens: func(text string) int { return tok.Count(text) + 2 },
		Handle: func(int, remotetest.Request, http.ResponseWriter, *http.Request) bool {
			time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			return false
		},
	})
	tb.Cleanup(srv.Close)
	return srv
}

// remoteEmbedder opens a remote Embedder on the server at url.
func remoteEmbedder(tb testing.TB, url string, retries int) *remote.Embedder {
	tb.Helper()
	e, err := remote.NewEmbedder(context.Background(), remote.EmbedderOptions{
		Client: remote.Options{Endpoints: []string{url}, BatchTexts: 8, Concurrency: 4, MaxRetries: retries,
			BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond},
		Tokenizer: testTokenizer(tb), MaxTokens: 128, QueryPrefix: "query: ", PassagePrefix: "passage: "})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// sequential hides an embedder's embed.Pipelined, so a build makes one
// call at a time.
type sequential struct{ embed.Embedder }

func TestBuildRemote(t *testing.T) {
	srv := newEmbedServer(t, "hash-served")
	docs := scifactDocs(t, 60)
	path := writeJSONL(t, docs)
	dir := t.TempDir()
	ctx := context.Background()
	var sums []string
	for i, emb := range []embed.Embedder{remoteEmbedder(t, srv.URL+"/v1", 0), sequential{remoteEmbedder(t, srv.URL+"/v1", 0)}} {
		out := filepath.Join(dir, []string{"pipelined", "sequential"}[i])
		ix, err := Build(ctx, openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Out: out, Windows: testWindows, BatchTokens: 300})
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		man, err := ReadManifest(out)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, w := range man.Windows {
			s = append(s, w.IndexSHA256, w.ChunkSHA256)
		}
		sums = append(sums, strings.Join(s, ","))
		if i == 1 {
			break
		}
		want := remote.Recorded{Served: remote.Served{API: remote.OpenAI, Model: "hash-served", Endpoints: []string{srv.URL + "/v1"},
			Tokenizer: emb.(*remote.Embedder).Served().Tokenizer, MaxTokens: 128, Headroom: 4}, QueryPrefix: "query: ", PassagePrefix: "passage: ", Dims: 32, Normalize: true}
		got, err := remote.ParseOrigin(originOf(man.Model))
		if err != nil || !reflect.DeepEqual(got, want) || man.Model.Name != "openai:hash-served" || man.Model.ModelSHA256 != "" || man.Model.MaxTokens != 124 {
			t.Errorf("manifest model %+v, origin %#v (%v), want %#v", man.Model, got, err, want)
		}
	}
	if sums[0] != sums[1] {
		t.Error("calls in flight at once gave other index files than one call at a time")
	}
	// Search reopens the model from the manifest at another address.
	moved := newEmbedServer(t, "hash-served")
	ix, err := OpenWith(OpenOptions{EmbedderOptions: embed.Options{Extra: []any{remote.OpenOptions{Endpoints: []string{moved.URL + "/v1"}}}}}, filepath.Join(dir, "pipelined"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, []string{docs[3].Title + " " + docs[3].Text}, SearchOptions{K: 3, Fusion: mustFusion(t, "rrf")})
	if err != nil || len(hits[0]) == 0 || hits[0][0].DocID != docs[3].ID {
		t.Errorf("search through the moved server: %v, %v", hits, err)
	}
	other := newEmbedServer(t, "another-model")
	_, err = OpenWith(OpenOptions{EmbedderOptions: embed.Options{Extra: []any{remote.OpenOptions{Endpoints: []string{other.URL + "/v1"}}}}}, filepath.Join(dir, "pipelined"))
	if !errors.Is(err, ErrIndexMismatch) {
		t.Errorf("opening with a server of another model: %v, want ErrIndexMismatch", err)
	}
}

func TestBuildRemoteFailureLeavesNothing(t *testing.T) {
	srv := newEmbedServer(t, "hash-served")
	path := writeJSONL(t, scifactDocs(t, 60))
	out := filepath.Join(t.TempDir(), "idx")
	emb := remoteEmbedder(t, srv.URL+"/v1", 2)
	srv.SetFault(remotetest.Fault{Kind: remotetest.Status, After: srv.Requests() + 10, Status: http.StatusBadGateway,
		Message: "the upstream is gone"})
	var reported []Progress
	_, stats, err := BuildWithStats(context.Background(), openCorpus(t, path, corpus.Options{}), Config{Embedder: emb, Out: out,
		Windows: testWindows, BatchTokens: 300, Progress: func(p Progress) { reported = append(reported, p) }})
	var re *remote.RequestError
	if !errors.As(err, &re) || re.Status != http.StatusBadGateway || re.Attempts != 3 ||
		!strings.Contains(err.Error(), srv.URL) || !strings.Contains(err.Error(), "the upstream is gone") ||
		!strings.Contains(err.Error(), "chunks of documents ") {
		t.Fatalf("error %v, want the batch, endpoint and status 502 after 3 attempts", err)
	}
	if stats != nil {
		t.Error("a failed build returned statistics")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 0 {
		t.Errorf("a failed build left %v", entries)
	}
	if len(reported) == 0 {
		t.Error("no progress was reported before the failure")
	}
}

// originOf is a manifest's origin as package embed holds it.
func originOf(m ModelInfo) embed.Origin {
	return embed.Origin{Kind: m.Origin.Kind, Params: string(m.Origin.Params), Access: string(m.Origin.Access)}
}

// TestFormat2RemoteIndexOpens writes an index's manifest back as format 2
// recorded a model behind a server (a "remote" section, no origin): the
// index opens from it at a moved server, searches as before, and is the
// same model as a format 3 shard of the same corpus.
func TestFormat2RemoteIndexOpens(t *testing.T) {
	srv := newEmbedServer(t, "hash-served")
	docs := scifactDocs(t, 30)
	dir := t.TempDir()
	ctx := context.Background()
	emb := remoteEmbedder(t, srv.URL+"/v1", 0)
	old, new3 := filepath.Join(dir, "format2"), filepath.Join(dir, "format3")
	for i, out := range []string{old, new3} {
		part := docs[i*15 : (i+1)*15]
		ix, err := Build(ctx, openCorpus(t, writeJSONL(t, part), corpus.Options{}), Config{Embedder: emb, Out: out, Windows: testWindows})
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
	}
	raw, err := os.ReadFile(filepath.Join(old, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	model := man["model"].(map[string]any)
	delete(model, "origin")
	model["remote"] = map[string]any{"kind": "openai", "model": "hash-served", "endpoints": srv.URL + "/v1",
		"tokenizer": emb.Served().Tokenizer, "tokenizer_origin": "other", "server_max_tokens": 128, "headroom": 4}
	man["format_version"] = 2
	if raw, err = json.Marshal(man); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "manifest.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	moved := newEmbedServer(t, "hash-served")
	opts := OpenOptions{EmbedderOptions: embed.Options{Extra: []any{remote.OpenOptions{Endpoints: []string{moved.URL + "/v1"}}}}}
	for _, dirs := range [][]string{{old}, {old, new3}} {
		ix, err := OpenWith(opts, dirs...)
		if err != nil {
			t.Fatalf("%v: %v", dirs, err)
		}
		hits, err := ix.Search(ctx, []string{docs[3].Title + " " + docs[3].Text}, SearchOptions{K: 3, Fusion: mustFusion(t, "rrf")})
		ix.Close()
		if err != nil || len(hits[0]) == 0 || hits[0][0].DocID != docs[3].ID {
			t.Errorf("%v: search: %v, %v", dirs, hits, err)
		}
	}
	if got := moved.Requests(); got == 0 {
		t.Error("the format 2 index did not reach the server it was given")
	}
}
