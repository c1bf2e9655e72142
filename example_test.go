package msrag_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/onnx"
)

// Build an index of a small corpus at two window sizes, write it to a
// directory, open it again and search it. The hash test embedder stands in for
// a model here (it needs only the tokenizer of all-minilm-l6-v2, fetched by
// make setup); with a real model, open it with msrag.OpenEmbedder("e5-small-v2",
// onnx.Options{}).
func Example() {
	dir, err := onnx.ResolveModel("all-minilm-l6-v2")
	if err != nil {
		log.Fatal(err)
	}
	emb, err := msrag.NewHashEmbedder(filepath.Join(dir, onnx.TokenizerFile), 64, 512)
	if err != nil {
		log.Fatal(err)
	}

	work, _ := os.MkdirTemp("", "msrag-example")
	defer os.RemoveAll(work)
	docs := `{"_id": "anaemia", "title": "Iron", "text": "Iron deficiency is the most common cause of anaemia worldwide."}
{"_id": "sleep", "title": "Sleep", "text": "Adults who sleep less than six hours a night report more headaches."}
{"_id": "coffee", "title": "Coffee", "text": "Moderate coffee drinking was not linked to heart disease in the cohort."}
`
	os.WriteFile(filepath.Join(work, "corpus.jsonl"), []byte(docs), 0o644)
	src, err := corpus.Open(filepath.Join(work, "corpus.jsonl"), corpus.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()

	ctx := context.Background()
	ix, err := msrag.Build(ctx, src, msrag.Config{Embedder: emb, Out: filepath.Join(work, "index"), Windows: []int{4, 8}})
	if err != nil {
		log.Fatal(err)
	}
	ix.Close()

	ix, err = msrag.OpenWith(msrag.OpenOptions{Embedder: emb}, filepath.Join(work, "index"))
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, []string{"coffee and heart disease", "iron deficiency anaemia"}, msrag.SearchOptions{K: 1})
	if err != nil {
		log.Fatal(err)
	}
	// Every chunk of the three short documents is retrieved, so every chunk
	// votes: "Coffee Moderate coffee ... cohort." is 15 tokens, 4 windows of 4
	// and 2 of 8; "Iron Iron deficiency ... worldwide." is 13, again 4 + 2.
	for _, h := range hits {
		best := h[0]
		ev := best.Evidence[0]
		fmt.Printf("%s: rank %d, %d chunks voted, best from window %d at rank %d\n", best.DocID, best.Rank, len(best.Evidence), ev.Window, ev.ChunkRank)
	}
	// Output:
	// coffee: rank 1, 6 chunks voted, best from window 4 at rank 1
	// anaemia: rank 1, 6 chunks voted, best from window 4 at rank 1
}
