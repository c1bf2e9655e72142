package eval_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/msrag/msrag/eval"
)

// benchRun makes nq queries of depth hits over 5,183 documents with one or
// two relevant documents each, with a fixed seed.
func benchRun(tb testing.TB, nq, depth int) (eval.Qrels, eval.Run) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	q, r := eval.Qrels{}, eval.Run{}
	for i := range nq {
		qid := fmt.Sprintf("q%d", i)
		q[qid] = map[string]int{fmt.Sprintf("d%d", rng.IntN(5183)): 1, fmt.Sprintf("d%d", rng.IntN(5183)): 1}
		perm := rng.Perm(5183)[:depth]
		hits := make([]eval.Hit, depth)
		for j, d := range perm {
			hits[j] = eval.Hit{Doc: fmt.Sprintf("d%d", d), Score: float64(depth-j) / float64(depth)}
		}
		r[qid] = hits
	}
	return q, r
}

// BenchmarkEvaluate scores SciFact-sized batches (300 queries) with all
// default metrics at run depths 100 and 1000.
func BenchmarkEvaluate(b *testing.B) {
	const nq = 300
	for _, depth := range []int{100, 1000} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			q, r := benchRun(b, nq, depth)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := eval.Evaluate(q, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nq), "ns/query")
		})
	}
}
