package corpus_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/corpus"
)

// drain reads r to its end.
func drain(t *testing.T, r corpus.Reader) {
	t.Helper()
	for {
		_, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestInputs checks that the JSONL and directory readers record the files
// they read whole, with sizes and sha256 equal to those of the files on disk
// (hashed here in one piece), and nothing before a file is read to its end.
func TestInputs(t *testing.T) {
	dir := t.TempDir()
	var lines bytes.Buffer
	for range 2000 {
		lines.WriteString(`{"_id": "d", "title": "t", "text": "some text to fill the buffer of the reader"}` + "\n")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(lines.Bytes())
	zw.Close()
	files := map[string][]byte{"c.jsonl": lines.Bytes(), "c.jsonl.gz": gz.Bytes()}
	txt := filepath.Join(dir, "txt")
	os.MkdirAll(txt, 0o755)
	files["txt/a.txt"], files["txt/b.md"] = []byte("first text"), []byte("second text")
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := func(name string) corpus.Input {
		sum := sha256.Sum256(files[name])
		return corpus.Input{Path: filepath.Join(dir, name), Size: int64(len(files[name])), SHA256: hex.EncodeToString(sum[:])}
	}
	for _, tc := range []struct {
		path string
		want []corpus.Input
	}{
		{"c.jsonl", []corpus.Input{want("c.jsonl")}},
		{"c.jsonl.gz", []corpus.Input{want("c.jsonl.gz")}},
		{"txt", []corpus.Input{want("txt/a.txt"), want("txt/b.md")}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r, err := corpus.Open(filepath.Join(dir, tc.path), corpus.Options{DedupeIDs: true, BatchSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := corpus.Inputs(r); tc.path != "txt" && got != nil {
				t.Errorf("inputs before the end: %v", got)
			}
			drain(t, r)
			got := corpus.Inputs(r)
			if len(got) != len(tc.want) {
				t.Fatalf("inputs %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("input %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
