//go:build !gpu

package experiment

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/embedders"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/onnx"
)

// TestSpecGPUs: Spec.GPUs is checked before any work (a window k FAISS on
// GPUs cannot return, a build without FAISS GPU support), and otherwise
// reaches the index, built or reused, and a scatter task's open. On this
// build the move itself fails with faiss.ErrGPUUnavailable, which is what
// shows that it was asked for.
func TestSpecGPUs(t *testing.T) {
	if _, err := onnx.ResolveModel("all-minilm-l6-v2"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	emb, err := embedders.OpenHash()
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	data, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	if err := hashembed.WriteDataset(data, 40); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	spec := Spec{Dataset: data, Out: out, Build: msrag.Config{Embedder: emb, Windows: chunk.Sizes(8)}, K: 10, ChannelK: 10, GPUs: []int{0}, Log: &log}
	ctx := context.Background()

	big := spec
	big.ChannelK = faiss.MaxGPUK + 1
	if _, err := Run(ctx, big); !errors.Is(err, faiss.ErrArgument) || !strings.Contains(err.Error(), "2049") {
		t.Fatalf("window k %d on GPUs: %v, want faiss.ErrArgument", big.ChannelK, err)
	}
	if _, err := Run(ctx, spec); !errors.Is(err, faiss.ErrGPUUnavailable) {
		t.Fatalf("GPUs on a build without FAISS GPU support: %v, want faiss.ErrGPUUnavailable", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("%s exists (%v): the checks came after the work", out, err)
	}
	if got := spec.scatterOptions().Open.GPUs; !slices.Equal(got, spec.GPUs) {
		t.Fatalf("a scatter task opens its shard on GPUs %v, want %v", got, spec.GPUs)
	}

	defer func(f func([]int, int) error) { checkGPUs = f }(checkGPUs)
	checkGPUs = func([]int, int) error { return nil }
	for _, want := range []string{"eval: building index", "eval: reusing index"} {
		log.Reset()
		_, err := Run(ctx, spec)
		if !errors.Is(err, faiss.ErrGPUUnavailable) || !strings.Contains(log.String(), want) {
			t.Fatalf("run after %q: %v, want faiss.ErrGPUUnavailable from moving the index; log:\n%s", want, err, log.String())
		}
	}
}
