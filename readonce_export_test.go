package msrag

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// CountManifestReads counts the manifests read and checked (readManifest)
// from now until the test ends, and returns the count so far.
func CountManifestReads(tb testing.TB) func() int64 {
	var n atomic.Int64
	orig := readManifest
	readManifest = func(dir string) (*Manifest, error) {
		n.Add(1)
		return orig(dir)
	}
	tb.Cleanup(func() { readManifest = orig })
	return n.Load
}

// BuildLexicalShards builds n shards, lexical only, of the first docs
// documents of the tests' corpus, and returns their directories and
// queries of those documents' titles.
func BuildLexicalShards(t *testing.T, docs, n int) ([]string, []string) {
	t.Helper()
	d := scifactDocs(t, docs)
	path, base := writeJSONL(t, d), t.TempDir()
	var dirs []string
	for i := range n {
		dirs = append(dirs, buildPart(t, path, filepath.Join(base, fmt.Sprint(i)), i, n))
	}
	return dirs, lexicalQueries(d, 5)
}
