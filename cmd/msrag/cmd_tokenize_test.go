package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
)

// writeTestTokenizer unpacks the committed BERT uncased tokenizer.json into
// dir/tokenizer.json.
func writeTestTokenizer(tb testing.TB, dir string) string {
	tb.Helper()
	return testfiles.BERTUncased(tb, dir)
}

func TestTokenize(t *testing.T) {
	dir := t.TempDir()
	path := writeTestTokenizer(t, dir)
	// A model directory holds msrag-model.json beside tokenizer.json.
	if err := os.WriteFile(filepath.Join(dir, "msrag-model.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Expected ids from the Hugging Face reference (tokenizers 0.23.3) for
	// "Hello, Wörld!": [CLS] hello , world ! [SEP].
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
		code  int
	}{
		{"json", `"Hello, Wörld!"` + "\n", []string{"--tokenizer", path},
			`{"ids":[101,7592,1010,2088,999,102],"spans":[[0,0],[0,5],[5,6],[7,13],[13,14],[0,0]]}` + "\n", exitOK},
		{"lines no special", "Hello, Wörld!\n", []string{"--tokenizer", path, "--lines", "--no-special"},
			`{"ids":[7592,1010,2088,999],"spans":[[0,5],[5,6],[7,13],[13,14]]}` + "\n", exitOK},
		{"max length", `"Hello, Wörld!"` + "\n", []string{"--tokenizer", path, "--max-length", "3"},
			`{"ids":[101,7592,102],"spans":[[0,0],[0,5],[0,0]]}` + "\n", exitOK},
		{"model dir", `"hello"` + "\n", []string{"--model", dir},
			`{"ids":[101,7592,102],"spans":[[0,0],[0,5],[0,0]]}` + "\n", exitOK},
		{"bad json", "Hello\n", []string{"--tokenizer", path}, "", exitFailure},
		{"no tokenizer", "", nil, "", exitUsage},
		{"both", "", []string{"--tokenizer", path, "--model", dir}, "", exitUsage},
		{"missing file", "", []string{"--tokenizer", filepath.Join(dir, "nope.json")}, "", exitFailure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.stdin, append([]string{"tokenize"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("code %d, want %d (stderr %q)", code, tc.code, errOut)
			}
			if tc.code == exitOK && out != tc.want {
				t.Errorf("output\n got %s\nwant %s", out, tc.want)
			}
			if tc.name == "bad json" && !strings.Contains(errOut, "stdin line 1") {
				t.Errorf("error %q does not name the line", errOut)
			}
		})
	}
}

func TestModelTokenizerPath(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("MSRAG_CACHE", cache)
	fetched := filepath.Join(cache, "models", "e5-small-v2")
	os.MkdirAll(fetched, 0o755)
	os.WriteFile(filepath.Join(fetched, "msrag-model.json"), []byte("{}"), 0o644)
	if got, err := modelTokenizerPath("e5-small-v2"); err != nil || got != filepath.Join(fetched, "tokenizer.json") {
		t.Errorf("fetched model: got %q, %v", got, err)
	}
	if got, err := modelTokenizerPath(fetched); err != nil || got != filepath.Join(fetched, "tokenizer.json") {
		t.Errorf("model directory: got %q, %v", got, err)
	}
	if _, err := modelTokenizerPath("bge-small-en-v1.5"); err == nil || !strings.Contains(err.Error(), "msrag model fetch") {
		t.Errorf("model not fetched: %v", err)
	}
}
