package onnx

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msrag/msrag/tokenizer"
)

// BenchmarkEmbedTokens embeds SciFact passages cut into windows of n content
// tokens, and reports real (unpadded) tokens/s and chunks/s.
func BenchmarkEmbedTokens(b *testing.B) {
	for _, model := range []string{"all-minilm-l6-v2", "e5-small-v2", "e5-small-v2-int8"} {
		for _, n := range []int{64, 200} {
			b.Run(fmt.Sprintf("%s/window=%d", model, n), func(b *testing.B) {
				benchEmbedTokens(b, model, n, 64, Options{})
			})
		}
	}
}

// BenchmarkEmbedTokensCUDA is BenchmarkEmbedTokens on the GPU, where there is
// one, for the model of the CUDA tests ($MSRAG_CUDA_TEST_MODEL), with 1,024
// windows a call so that the default token budget makes several batches.
func BenchmarkEmbedTokensCUDA(b *testing.B) {
	needCUDA(b)
	for _, n := range []int{64, 200} {
		b.Run(fmt.Sprintf("%s/window=%d", cudaTestModel(), n), func(b *testing.B) {
			benchEmbedTokens(b, cudaTestModel(), n, 1024, Options{Device: DeviceCUDA})
		})
	}
}

// benchEmbedTokens embeds up to count windows of n content tokens cut from
// SciFact passages, all in one call per iteration.
func benchEmbedTokens(b *testing.B, model string, n, count int, opts Options) {
	e := openModel(b, model, opts)
	texts := sampleTexts(b, count)
	if len(texts) == 0 {
		b.Skip("no SciFact texts")
	}
	var seqs [][]int32
	for _, enc := range e.Tokenizer().EncodeBatch(texts, tokenizer.Options{NoSpecial: true, MaxLength: -1}) {
		for lo := 0; lo < len(enc.IDs) && len(seqs) < count; lo += n {
			seqs = append(seqs, enc.IDs[lo:min(lo+n, len(enc.IDs))])
		}
	}
	real := 0
	for _, s := range seqs {
		real += len(s) + e.PrefixTokens(Passage) + 2
	}
	b.SetBytes(int64(real) * 4) // input ids as int32
	b.ReportAllocs()
	b.ResetTimer()
	start, iters := time.Now(), 0
	for b.Loop() {
		iters++
		if _, err := e.EmbedTokens(context.Background(), seqs, Passage); err != nil {
			b.Fatal(err)
		}
	}
	s := time.Since(start).Seconds()
	b.ReportMetric(float64(real*iters)/s, "tokens/s")
	b.ReportMetric(float64(len(seqs)*iters)/s, "chunks/s")
}
