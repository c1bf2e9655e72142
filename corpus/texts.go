package corpus

import (
	"context"
	"fmt"
	"io"
)

// ReadTexts reads the corpus at path (as Open reads it) for the documents
// of ids and returns each one's Doc.Full text, the text an index's byte
// spans point into; it stops once every one is found. An id the corpus
// lacks is an error naming it.
func ReadTexts(ctx context.Context, path string, opts Options, ids map[string]bool) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	r, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for len(out) < len(ids) {
		docs, err := r.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if ids[d.ID] {
				out[d.ID] = d.Full()
			}
		}
	}
	for id := range ids {
		if _, ok := out[id]; !ok {
			return nil, fmt.Errorf("corpus: %s has no document %q: %w", path, id, ErrRecord)
		}
	}
	return out, nil
}
