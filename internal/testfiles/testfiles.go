// Package testfiles gives tests of any package the files committed under the
// repository's testdata folders, found from the repository root (the directory
// holding go.mod), whatever directory a test runs in.
package testfiles

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Root returns the repository root: the nearest directory above the working
// directory that holds go.mod.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("testfiles: no go.mod above the working directory")
		}
		dir = parent
	}
}

// BERTUncased unpacks the committed BERT uncased tokenizer.json (the one of
// all-MiniLM-L6-v2 and e5-small-v2, tokenizer/testdata) into dir/tokenizer.json
// and returns that path.
func BERTUncased(tb testing.TB, dir string) string {
	tb.Helper()
	data := ReadGzip(tb, filepath.Join(Root(tb), "tokenizer", "testdata", "bert-uncased.tokenizer.json.gz"))
	path := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// ReadGzip returns the decompressed contents of the gzip file at path.
func ReadGzip(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return data
}
