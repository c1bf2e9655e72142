// Package testfiles gives tests of any package the files committed under the
// repository's testdata folders, found from the repository root (the directory
// holding go.mod), whatever directory a test runs in, and the evaluation data
// sets make setup fetched into the cache ([Dataset]).
package testfiles

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/internal/cache"
)

// DataDir returns where make setup and scripts/fetch-data.sh put the
// evaluation data set name: data/name in msrag's cache (internal/cache.Dir).
// It does not look whether the set is there: [Dataset] does.
func DataDir(name string) string { return filepath.Join(cache.Dir(), "data", name) }

// Dataset returns DataDir(name) when the set is there (its corpus.jsonl.gz
// is). When it is not, it skips tb saying which set is missing and what
// fetches it, or, under CI ([UnderCI]), fails tb.
func Dataset(tb testing.TB, name string) string {
	tb.Helper()
	dir := DataDir(name)
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl.gz")); err != nil {
		const fetch = "scripts/fetch-data.sh %s fetches it (make setup fetches scifact)"
		if UnderCI() {
			tb.Fatalf("data set %s absent under CI: %v; "+fetch, name, err, name)
		}
		tb.Skipf("data set %s absent: %v; "+fetch, name, err, name)
	}
	return dir
}

// UnderCI reports whether the tests run under CI ($CI set, and not "false"
// or "0"), where a test whose inputs are missing fails instead of skipping.
func UnderCI() bool {
	switch os.Getenv("CI") {
	case "", "false", "0":
		return false
	}
	return true
}

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
