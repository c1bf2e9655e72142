package msrag_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/onnx" // registers the in-process ONNX kind
)

// Build an index of a small corpus at two window sizes, write it to a
// directory, open it again and search it, with the all-minilm-l6-v2 model
// (fetched by make setup or msrag model fetch).
func Example() {
	ctx := context.Background()
	emb, err := msrag.OpenEmbedder(ctx, "all-minilm-l6-v2", embed.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer emb.Close()

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

	ix, err := msrag.Build(ctx, src, msrag.Config{Embedder: emb, Out: filepath.Join(work, "index"), Windows: chunk.Sizes(4, 8)})
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
		fmt.Printf("%s: rank %d, %d chunks voted\n", best.DocID, best.Rank, len(best.Evidence))
	}
	// Output:
	// coffee: rank 1, 6 chunks voted
	// anaemia: rank 1, 6 chunks voted
}

// Build an index of lexical windows only, with no model: the windows are
// cut by all-minilm-l6-v2's tokenizer (fetched by make setup) as a build
// with that model would cut them, and the index searches by the query
// texts alone, fusing its lexical channels.
func Example_lexicalOnly() {
	ctx := context.Background()
	dir, err := onnx.ResolveModel("all-minilm-l6-v2")
	if err != nil {
		log.Fatal(err)
	}
	tok, err := msrag.LoadWindowTokenizer("all-minilm-l6-v2", filepath.Join(dir, onnx.TokenizerFile))
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
	ix, err := msrag.Build(ctx, src, msrag.Config{Tokenizer: tok, Out: filepath.Join(work, "index"), Windows: chunk.Sizes(4, 8)})
	if err != nil {
		log.Fatal(err)
	}
	ix.Close()

	ix, err = msrag.Open(filepath.Join(work, "index")) // no model is opened
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, []string{"coffee and heart disease", "how many hours of sleep"}, msrag.SearchOptions{K: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dense windows:", ix.HasModel(), "; channels:", ix.Layout())
	// Each query's words are in one document only.
	for _, h := range hits {
		fmt.Println(h[0].DocID)
	}
	// Output:
	// dense windows: false ; channels: bm25-w4, bm25-w8, bm25-doc
	// coffee
	// sleep
}
