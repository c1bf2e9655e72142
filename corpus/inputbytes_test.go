package corpus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
)

// TestInputBytes checks the fraction of a JSONL file read that a reader's
// Stats give at once, plain and gzip'd: the file's size, the bytes read as
// stored, part of it after the first batch and all of it at the end.
func TestInputBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for i := range 3000 { // ~3 MiB of random hex, which gzip cannot shrink below its 1 MiB buffer
		fmt.Fprintf(&sb, `{"_id": "d%d", "text": "`, i)
		for range 60 {
			fmt.Fprintf(&sb, "%016x", rng.Uint64())
		}
		sb.WriteString("\"}\n")
	}
	text := sb.String()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"c.jsonl", []byte(text)},
		{"c.jsonl.gz", gzipBytes(t, []byte(text))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := corpus.Open(path, corpus.Options{BatchSize: 10})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Next(context.Background()); err != nil {
				t.Fatal(err)
			}
			size := int64(len(tc.data))
			if st := r.Stats(); st.InputSize != size || st.InputBytes <= 0 || st.InputBytes >= size {
				t.Errorf("after one batch: %d of %d bytes read; want part of the file's %d", st.InputBytes, st.InputSize, size)
			}
			for {
				if _, err := r.Next(context.Background()); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			if st := r.Stats(); st.InputBytes != size || st.InputSize != size {
				t.Errorf("at the end: %d of %d bytes read; want all %d", st.InputBytes, st.InputSize, size)
			}
		})
	}
}
