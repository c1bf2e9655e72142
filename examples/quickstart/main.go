// Command quickstart indexes corpus.jsonl (dense and lexical windows) and searches it.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	_ "github.com/msrag/msrag/embedders" // the built-in embedder kinds: ONNX in process, servers
)

func main() {
	ctx := context.Background()
	emb, err := msrag.OpenEmbedder(ctx, "e5-small-v2", embed.Options{}) // or "tei:http://host:8080", ...
	if err != nil {
		log.Fatal(err)
	}
	defer emb.Close()
	src, err := corpus.Open("corpus.jsonl", corpus.Options{}) // or Parquet, Arrow, a directory of .txt/.md
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	ix, err := msrag.Build(ctx, src, msrag.Config{Embedder: emb, Out: "idx", Windows: chunk.Sizes(100, 200, 500),
		Channels: []channel.Params{dense.Params{}, bm25.DefaultConfig()}}) // none: dense only
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, []string{"what causes anaemia?"}, msrag.SearchOptions{K: 10}) // Fusion: fusion.Parse(RULE)
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range hits[0] { // one ranking per query
		fmt.Printf("%2d %-12s %.4f, %d chunks voted\n", h.Rank, h.DocID, h.Score, len(h.Evidence))
	}
}
