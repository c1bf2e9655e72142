package msrag

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/onnx"
)

// breakingEmbedder passes every call to an ONNX model, but on call number
// at puts an id outside the vocabulary into one chunk, which ONNX Runtime
// refuses in the middle of the call.
type breakingEmbedder struct {
	*onnx.Embedder
	at    int64
	calls atomic.Int64
}

func (b *breakingEmbedder) EmbedChunks(ctx context.Context, chunks []embed.Chunk, role embed.Role) ([]float32, error) {
	if b.calls.Add(1) == b.at {
		chunks = slices.Clone(chunks)
		k := len(chunks) / 2
		ids := slices.Clone(chunks[k].IDs)
		ids[len(ids)/2] = int32(b.Tokenizer().VocabSize() + 1000)
		chunks[k].IDs = ids
	}
	return b.Embedder.EmbedChunks(ctx, chunks, role)
}

// TestBuildStopsWhenASessionFails: a build on an int8 model's two sessions
// whose third embedding call fails in one session stops with that error and
// leaves nothing behind.
func TestBuildStopsWhenASessionFails(t *testing.T) {
	fetchedEmbedder(t, "all-minilm-l6-v2-int8") // skips when the model is absent
	dir, err := onnx.ResolveModel("all-minilm-l6-v2-int8")
	if err != nil {
		t.Fatal(err)
	}
	e, err := onnx.Open(dir, onnx.Options{Sessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	emb := &breakingEmbedder{Embedder: e, at: 3}
	path := writeJSONL(t, scifactDocs(t, 60))
	parent := t.TempDir()
	_, err = Build(context.Background(), openCorpus(t, path, corpus.Options{}),
		Config{Embedder: emb, Out: filepath.Join(parent, "idx"), Windows: chunk.Sizes(64, 128), BatchTokens: 2048})
	if !errors.Is(err, onnx.ErrRuntime) || !strings.Contains(err.Error(), "session ") {
		t.Fatalf("build with a session failing: %v, want the session's ONNX Runtime error", err)
	}
	t.Logf("the error: %v", err)
	if n := emb.calls.Load(); n != 3 {
		t.Errorf("the embedder was called %d times; the build should stop at the failing call (3)", n)
	}
	assertEmptyDir(t, parent)
}
