package onnx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/internal/vectest"
)

// needFP16 skips unless the CUDA tests' model has a half-precision file.
func needFP16(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(fetchedModel(tb, cudaTestModel()), FP16ModelFile)); err != nil {
		tb.Skipf("model %s has no %s", cudaTestModel(), FP16ModelFile)
	}
}

// TestCUDAFP16 runs the half-precision model on the GPU where there is one
// and compares its vectors of 64 SciFact passages with the fp32 model's on
// the CPU: cosine at least 0.999 each.
func TestCUDAFP16(t *testing.T) {
	needCUDA(t)
	needFP16(t)
	texts := sampleTexts(t, 64)
	if len(texts) == 0 {
		t.Skip("no SciFact texts")
	}
	cpu := openModel(t, cudaTestModel(), Options{})
	gpu := openModel(t, cudaTestModel(), Options{Device: DeviceCUDA, FP16: true})
	a, err := cpu.Embed(context.Background(), texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gpu.Embed(context.Background(), texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	d, lowest, sum := cpu.Dims(), 1.0, 0.0
	for i := range texts {
		c := vectest.Cosine(a[i*d:(i+1)*d], b[i*d:(i+1)*d])
		lowest, sum = min(lowest, c), sum+c
	}
	t.Logf("fp16 on the GPU against fp32 on the CPU, %d passages: cosine lowest %.6f, mean %.6f", len(texts), lowest, sum/float64(len(texts)))
	if lowest < 0.999 {
		t.Fatalf("lowest cosine %.6f, want >= 0.999", lowest)
	}
}

// BenchmarkEmbedTokensCUDAFP16 is BenchmarkEmbedTokensCUDA with the
// half-precision model.
func BenchmarkEmbedTokensCUDAFP16(b *testing.B) {
	needCUDA(b)
	needFP16(b)
	for _, n := range []int{64, 200} {
		b.Run(fmt.Sprintf("%s/window=%d", cudaTestModel(), n), func(b *testing.B) {
			benchEmbedTokens(b, cudaTestModel(), n, 1024, Options{Device: DeviceCUDA, FP16: true})
		})
	}
}
