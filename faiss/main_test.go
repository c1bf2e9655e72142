package faiss_test

import (
	"flag"
	"os"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// TestMain runs the tests with one FAISS thread: they use tiny indices, and
// on a busy machine OpenMP teams that wait for each other at every k-means
// iteration make them many times slower. Benchmarks keep FAISS's default
// (OMP_NUM_THREADS, or all CPUs).
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		faiss.SetThreads(1)
	}
	os.Exit(m.Run())
}
