package msrag

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/internal/testembed"
	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/tokenizer"
)

// embedServer is an OpenAI-compatible server for build tests: it embeds
// with a Hash embedder (so a text near a query scores high), counts tokens
// exactly as the remote Embedder does, answers after a random short delay
// (so that overlapping calls finish out of order), and fails every request
// once failAfter requests have been answered (0: never).
type embedServer struct {
	*httptest.Server
	hash      *testembed.Hash
	tok       *tokenizer.Tokenizer
	model     string
	failAfter int64
	n         atomic.Int64
}

func newEmbedServer(tb testing.TB, model string) *embedServer {
	tb.Helper()
	s := &embedServer{hash: testEmbedder(tb), model: model}
	s.tok = s.hash.Tokenizer()
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

func (s *embedServer) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	if n := s.n.Add(1); s.failAfter > 0 && n > s.failAfter {
		w.WriteHeader(http.StatusBadGateway)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "the upstream is gone"}})
		return
	}
	time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
	vecs, _ := s.hash.Embed(r.Context(), req.Input, embed.Passage)
	dims := s.hash.Spec().Dims
	var data []map[string]any
	tokens := 0
	for i, t := range req.Input {
		data = append(data, map[string]any{"index": i, "embedding": vecs[i*dims : (i+1)*dims]})
		tokens += s.tok.Count(t) + 2
	}
	json.NewEncoder(w).Encode(map[string]any{"data": data, "model": s.model, "usage": map[string]any{"prompt_tokens": tokens}})
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
		want := store.RemoteInfo{Kind: "openai", Model: "hash-served", Endpoints: srv.URL + "/v1",
			Tokenizer: emb.(*remote.Embedder).Served().Tokenizer, TokenizerOrigin: "other", ServerMaxTokens: 128, Headroom: 4}
		if man.Model.Remote != want || man.Model.Name != "openai:hash-served" || man.Model.ModelSHA256 != "" || man.Model.MaxTokens != 124 {
			t.Errorf("manifest model %+v, want remote %+v", man.Model, want)
		}
	}
	if sums[0] != sums[1] {
		t.Error("calls in flight at once gave other index files than one call at a time")
	}
	// Search reopens the model from the manifest at another address.
	moved := newEmbedServer(t, "hash-served")
	ix, err := OpenWith(OpenOptions{Remote: RemoteOptions{Endpoints: []string{moved.URL + "/v1"}}}, filepath.Join(dir, "pipelined"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, []string{docs[3].Title + " " + docs[3].Text}, SearchOptions{K: 3, Fusion: mustFusion(t, "rrf")})
	if err != nil || len(hits[0]) == 0 || hits[0][0].DocID != docs[3].ID {
		t.Errorf("search through the moved server: %v, %v", hits, err)
	}
	other := newEmbedServer(t, "another-model")
	_, err = OpenWith(OpenOptions{Remote: RemoteOptions{Endpoints: []string{other.URL + "/v1"}}}, filepath.Join(dir, "pipelined"))
	if !errors.Is(err, ErrIndexMismatch) {
		t.Errorf("opening with a server of another model: %v, want ErrIndexMismatch", err)
	}
}

func TestBuildRemoteFailureLeavesNothing(t *testing.T) {
	srv := newEmbedServer(t, "hash-served")
	path := writeJSONL(t, scifactDocs(t, 60))
	out := filepath.Join(t.TempDir(), "idx")
	emb := remoteEmbedder(t, srv.URL+"/v1", 2)
	srv.failAfter = srv.n.Load() + 10
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
