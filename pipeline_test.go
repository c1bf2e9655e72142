package msrag

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/tokenizer"
)

// stageEmbedder returns zero vectors at once, so the stages before it set the
// pace, and can fail or cancel the build at its n-th call.
type stageEmbedder struct {
	tok      *tokenizer.Tokenizer
	calls    atomic.Int64
	failAt   int64              // the call that fails; 0: none
	cancelAt int64              // the call that cancels; 0: none
	cancel   context.CancelFunc // called at cancelAt
}

func (e *stageEmbedder) Spec() embed.Spec {
	return embed.Spec{Name: "stage", Dims: 8, MaxTokens: 512, SpecialTokens: e.tok.NumSpecialTokens(), Pooling: embed.PoolMean}
}
func (e *stageEmbedder) Tokenizer() *tokenizer.Tokenizer { return e.tok }
func (e *stageEmbedder) Close() error                    { return nil }
func (e *stageEmbedder) Embed(ctx context.Context, texts []string, _ embed.Role) ([]float32, error) {
	return make([]float32, 8*len(texts)), nil
}
func (e *stageEmbedder) EmbedChunks(ctx context.Context, chunks []embed.Chunk, _ embed.Role) ([]float32, error) {
	n := e.calls.Add(1)
	if n == e.failAt {
		return nil, errors.New("the embedding server went away")
	}
	if n == e.cancelAt {
		e.cancel()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return make([]float32, 8*len(chunks)), nil
}

// countingReader counts the documents its reader has handed out.
type countingReader struct {
	corpus.Reader
	docs atomic.Int64
}

func (r *countingReader) Next(ctx context.Context) ([]corpus.Doc, error) {
	docs, err := r.Reader.Next(ctx)
	r.docs.Add(int64(len(docs)))
	return docs, err
}

// bigCorpus writes n documents of about words words each.
func bigCorpus(tb testing.TB, n, words int) string {
	tb.Helper()
	vocab := strings.Fields("cell protein gene expression tumour mice patients risk study trial dose effect blood brain signal pathway receptor")
	rng := rand.New(rand.NewPCG(1, 2))
	var docs []testDoc
	for i := range n {
		var b strings.Builder
		for range words {
			b.WriteString(vocab[rng.IntN(len(vocab))])
			b.WriteByte(' ')
		}
		docs = append(docs, testDoc{ID: fmt.Sprint("d", i), Text: b.String()})
	}
	return writeJSONL(tb, docs)
}

const (
	pipeDocs    = 3000
	pipeWords   = 400
	pipeBatch   = 50 // documents per corpus batch
	pipeWorkers = 2
	// pipeSlots is the most batches between read and order (internal/build).
	pipeSlots = 2*pipeWorkers + 2
)

// pipeBuild builds the big corpus with emb into a fresh directory and returns
// the error, the documents read and the directory's parent.
func pipeBuild(t *testing.T, ctx context.Context, emb Embedder) (error, int64, string) {
	t.Helper()
	return pipeBuildWith(t, ctx, emb, nil)
}

// pipeBuildWith is pipeBuild with hook called for every document before it
// is tokenized (Config.prepareHook).
func pipeBuildWith(t *testing.T, ctx context.Context, emb Embedder, hook func(id string) error) (error, int64, string) {
	t.Helper()
	src := &countingReader{Reader: openCorpus(t, pipeCorpus(t), corpus.Options{BatchSize: pipeBatch})}
	parent := t.TempDir()
	_, err := Build(ctx, src, Config{Embedder: emb, Out: filepath.Join(parent, "idx"), Windows: chunk.Sizes(50, 100, 200), Workers: pipeWorkers, BatchTokens: 4096, prepareHook: hook})
	return err, src.docs.Load(), parent
}

var pipeCorpusPath string

func pipeCorpus(t *testing.T) string {
	if pipeCorpusPath == "" {
		dir, err := os.MkdirTemp("", "msrag-pipe")
		if err != nil {
			t.Fatal(err)
		}
		pipeCorpusPath = bigCorpus(&tempTB{T: t, dir: dir}, pipeDocs, pipeWords)
	}
	return pipeCorpusPath
}

// tempTB keeps the big corpus for the whole test binary (TempDir of one test
// would remove it when that test ends).
type tempTB struct {
	*testing.T
	dir string
}

func (t *tempTB) TempDir() string { return t.dir }

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		t.Errorf("left behind: %s", e.Name())
	}
}

func TestBuildStopsOnFailingDocument(t *testing.T) {
	const bad = "d1000"
	failBad := func(id string) error {
		if id == bad {
			return errors.New("cannot be cut")
		}
		return nil
	}
	err, read, parent := pipeBuildWith(t, context.Background(), &stageEmbedder{tok: testEmbedder(t).Tokenizer()}, failBad)
	if err == nil || !strings.Contains(err.Error(), `"`+bad+`"`) {
		t.Fatalf("build with a failing document: %v, want an error naming %s", err, bad)
	}
	// Documents 0..1000 and at most the batches in flight after it.
	if limit := int64(1000 + (pipeSlots+1)*pipeBatch); read > limit {
		t.Errorf("%d documents read after document %d failed; at most %d (the batches in flight) may be", read, 1000, limit)
	}
	assertEmptyDir(t, parent)
}

// TestSlowWorkerBoundsMemory stalls one worker on one document until the
// reader stops reading, and checks that it stopped within the batches in
// flight and that the heap stayed far below the whole corpus tokenized.
func TestSlowWorkerBoundsMemory(t *testing.T) {
	const slow = "d600"
	var src *countingReader
	var readAtStall int64
	var heapAtStall, heapBefore uint64
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore = ms.HeapAlloc
	stall := func(id string) error {
		if id != slow {
			return nil
		}
		// Wait until the reader has stopped for 300 ms (or read everything).
		last, still := int64(-1), 0
		for still < 6 && last < pipeDocs {
			time.Sleep(50 * time.Millisecond)
			if n := src.docs.Load(); n == last {
				still++
			} else {
				last, still = n, 0
			}
		}
		readAtStall = last
		runtime.GC()
		runtime.ReadMemStats(&ms)
		heapAtStall = ms.HeapAlloc
		return errors.New("stalled long enough")
	}
	src = &countingReader{Reader: openCorpus(t, pipeCorpus(t), corpus.Options{BatchSize: pipeBatch})}
	parent := t.TempDir()
	_, err := Build(context.Background(), src, Config{Embedder: &stageEmbedder{tok: testEmbedder(t).Tokenizer()},
		Out: filepath.Join(parent, "idx"), Windows: chunk.Sizes(50, 100, 200), Workers: pipeWorkers, BatchTokens: 4096,
		prepareHook: stall})
	if err == nil {
		t.Fatal("the stalled document's error was lost")
	}
	if limit := int64(600 + (pipeSlots+1)*pipeBatch); readAtStall > limit {
		t.Errorf("the reader read %d documents while document 600 was stalled; at most %d may be in flight", readAtStall, limit)
	}
	// The whole corpus tokenized would hold its 1.2 M token ids and byte
	// offsets (20 bytes a token) and its text: about 35 MB.
	if grew := int64(heapAtStall) - int64(heapBefore); grew > 12<<20 {
		t.Errorf("the heap grew by %d MB while one worker was stalled", grew>>20)
	}
	assertEmptyDir(t, parent)
}

func TestBuildStopsOnEmbedderError(t *testing.T) {
	emb := &stageEmbedder{tok: testEmbedder(t).Tokenizer(), failAt: 5}
	err, _, parent := pipeBuild(t, context.Background(), emb)
	if err == nil || !strings.Contains(err.Error(), "went away") {
		t.Fatalf("build with a failing embedder: %v", err)
	}
	if n := emb.calls.Load(); n != 5 {
		t.Errorf("the embedder was called %d times; the build should stop at the failing call (5)", n)
	}
	assertEmptyDir(t, parent)
}

func TestBuildCancelledMidway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emb := &stageEmbedder{tok: testEmbedder(t).Tokenizer(), cancelAt: 4, cancel: cancel}
	err, read, parent := pipeBuild(t, ctx, emb)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v, want context.Canceled", err)
	}
	if n := emb.calls.Load(); n > 5 {
		t.Errorf("the embedder was called %d times; the build should stop within one batch of the cancel (call 4)", n)
	}
	if read >= pipeDocs {
		t.Errorf("all %d documents were read after a cancel", read)
	}
	assertEmptyDir(t, parent)
}
