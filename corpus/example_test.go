package corpus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/corpus"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "corpus")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "corpus.jsonl")
	os.WriteFile(path, []byte(`{"_id":"d1","title":"Cats","text":"Cats purr."}
{"_id":"d2","text":""}
{"_id":"d3","text":"Dogs bark."}
`), 0o644)

	r, err := corpus.Open(path, corpus.Options{BatchSize: 2})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for {
		docs, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err)
		}
		for _, d := range docs {
			fmt.Printf("%s: %q\n", d.ID, d.Full())
		}
	}
	st := r.Stats()
	fmt.Printf("%d documents, %d empty skipped\n", st.Docs, st.Empty)
	// Output:
	// d1: "Cats Cats purr."
	// d3: "Dogs bark."
	// 2 documents, 1 empty skipped
}
