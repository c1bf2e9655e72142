package onnx

import (
	"os"
	"path/filepath"
	"testing"
)

// fetchedModel returns the directory of a fetched model. It skips the test when
// the model is absent, unless CI is set (there setup fetches the models first, so
// a missing model is a failure).
func fetchedModel(tb testing.TB, name string) string {
	tb.Helper()
	dir := filepath.Join(ModelsDir(), name)
	if _, err := os.Stat(filepath.Join(dir, ModelFile)); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("model %s not fetched (scripts/fetch-model.sh %s)", name, name)
		}
		tb.Fatalf("model %s not fetched under CI: %v", name, err)
	}
	if _, err := os.Stat(LibraryPath()); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("onnx runtime library absent (scripts/setup.sh): %v", err)
		}
		tb.Fatalf("onnx runtime library absent under CI: %v", err)
	}
	return dir
}

// openModel opens a fetched model for a test and closes it at the end.
func openModel(tb testing.TB, name string, opts Options) *Embedder {
	tb.Helper()
	e, err := Open(fetchedModel(tb, name), opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", name, err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}
