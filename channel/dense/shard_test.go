package dense

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/faiss"
)

// rows maps row r to document r/2 (two chunks a document), span r.
type rows int

func (n rows) Len() int                      { return int(n) }
func (rows) Doc(r int32) int32               { return r / 2 }
func (rows) Span(r int32) (start, end int64) { return int64(r), int64(r) + 1 }

func flatOf(t *testing.T, dims int, vecs []float32) *faiss.Index {
	t.Helper()
	ix, err := faiss.New(dims, "Flat", faiss.InnerProduct)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(vecs); err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestEngineCandidatesRescored stands in for FAISS on a GPU with an engine
// whose scores round otherwise than the CPU's (each vector nudged by up to
// 1e-4) and whose ties come in another order: the shard's lists must still
// be the CPU search's, scores and order of ties included, since the index
// in main memory rescores what the engine finds and channel.Top orders it.
func TestEngineCandidatesRescored(t *testing.T) {
	const dims, n, nq, k = 16, 600, 40, 20
	r := rand.New(rand.NewPCG(1, 2))
	vecs := make([]float32, n*dims)
	for i := range vecs {
		vecs[i] = float32(r.NormFloat64())
	}
	// Exact ties: rows 100-139 are copies of rows 0-39 (other documents).
	copy(vecs[100*dims:140*dims], vecs[:40*dims])
	nudged := make([]float32, len(vecs))
	for i, v := range vecs {
		nudged[i] = v + float32(r.Float64()-0.5)*2e-4
	}
	q := &channel.Queries{Dims: dims, Vectors: make([]float32, nq*dims)}
	copy(q.Vectors, vecs[:nq*dims]) // each query's best rows are a tied pair
	for i := range q.Vectors {
		q.Vectors[i] += float32(r.NormFloat64()) * 0.1
	}
	spec := chunk.Sizes(64)[0]
	cpu := &shard{where: "cpu", rows: []channel.RowMap{rows(n)}, windows: []*window{{spec: spec, index: flatOf(t, dims, vecs)}}}
	defer cpu.Close()
	gpu := &shard{where: "engine", rows: []channel.RowMap{rows(n)},
		windows: []*window{{spec: spec, index: flatOf(t, dims, vecs), gpu: flatOf(t, dims, nudged)}}}
	defer gpu.Close()
	if !gpu.OnGPU() || cpu.OnGPU() {
		t.Fatal("OnGPU wrong")
	}
	want, err := cpu.Search(context.Background(), q, nil, k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gpu.Search(context.Background(), q, nil, k)
	if err != nil {
		t.Fatal(err)
	}
	ties := 0
	for qi := range nq {
		for j := range k {
			a, b := got[0].At(qi, j), want[0].At(qi, j)
			if a != b {
				t.Fatalf("query %d place %d: %+v, the CPU search gives %+v", qi, j, a, b)
			}
			if j > 0 && a.Score == got[0].At(qi, j-1).Score {
				ties++
			}
		}
	}
	if ties < nq {
		t.Fatalf("only %d tied places: the test lost its ties", ties)
	}
	// The engine alone orders them otherwise: without rescoring the test
	// would fail.
	raw, err := (&shard{rows: []channel.RowMap{rows(n)}, windows: []*window{{spec: spec, index: gpu.windows[0].gpu}}}).Search(context.Background(), q, nil, k)
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range raw[0].Rows {
		same = same && raw[0].Rows[i] == want[0].Rows[i]
	}
	if same {
		t.Fatal("the nudged engine ranks as the CPU does: the test shows nothing")
	}
}

// TestGPUWindowKRefused: a shard on GPUs refuses a window k FAISS on GPUs
// cannot return, before searching.
func TestGPUWindowKRefused(t *testing.T) {
	spec := chunk.Sizes(64)[0]
	sh := &shard{where: "engine", rows: []channel.RowMap{rows(4)},
		windows: []*window{{spec: spec, index: flatOf(t, 4, make([]float32, 16)), gpu: flatOf(t, 4, make([]float32, 16))}}}
	defer sh.Close()
	q := &channel.Queries{Dims: 4, Vectors: make([]float32, 4)}
	if _, err := sh.Search(context.Background(), q, nil, faiss.MaxGPUK+1); err == nil {
		t.Fatal("window k over faiss.MaxGPUK on GPUs: no error")
	}
	if _, err := sh.Search(context.Background(), q, nil, faiss.MaxGPUK); err != nil {
		t.Fatal(err)
	}
}
