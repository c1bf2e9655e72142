package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/msrag/msrag/corpus"
)

// checkDataset opens dir with corpus.OpenDataset and reads from every part:
// the first documents of every corpus file (which checks its columns), all
// the queries and the qrels of every split. It returns a summary of what it
// read.
func checkDataset(ctx context.Context, dir string) (string, error) {
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		return "", err
	}
	files := []string{ds.Corpus}
	if st, err := os.Stat(ds.Corpus); err == nil && st.IsDir() {
		if files, err = filepath.Glob(filepath.Join(ds.Corpus, "*.parquet")); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		if err := readFirst(ctx, f); err != nil {
			return "", err
		}
	}
	queries, err := ds.ReadQueries(corpus.Options{})
	if err != nil {
		return "", err
	}
	var splits []string
	for _, split := range ds.Splits() {
		qrels, err := ds.ReadQrels(split)
		if err != nil {
			return "", err
		}
		splits = append(splits, fmt.Sprintf("%s %d", split, len(qrels)))
	}
	return fmt.Sprintf("%d corpus file(s), %d queries, judgements %s", len(files), len(queries), strings.Join(splits, ", ")), nil
}

// readFirst reads the first batch of documents of one corpus file.
func readFirst(ctx context.Context, path string) error {
	r, err := corpus.Open(path, corpus.Options{BatchSize: 16})
	if err != nil {
		return err
	}
	defer r.Close()
	if _, err := r.Next(ctx); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: no document: %w", path, corpus.ErrEmpty)
		}
		return err
	}
	return nil
}
