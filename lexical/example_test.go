package lexical_test

import (
	"bytes"
	"fmt"

	"github.com/msrag/msrag/lexical"
)

func ExampleAnalyzer_Terms() {
	fmt.Println(lexical.English.Terms("The cats are running in İstanbul's 2 labs, state-of-the-art!"))
	fmt.Println(lexical.None.Terms("The cats are running in İstanbul's 2 labs, state-of-the-art!"))
	// Output:
	// [cat run stanbul lab state art]
	// [the cats are running in stanbul labs state of the art]
}

func ExampleParseAnalyzer() {
	a, err := lexical.ParseAnalyzer("english")
	fmt.Println(a, err)
	_, err = lexical.ParseAnalyzer("french")
	fmt.Println(err)
	// Output:
	// english <nil>
	// lexical: unknown analyzer "french" (want english or none)
}

func ExampleIndex_Search() {
	chunks := []string{
		"BM25 ranks documents by term frequency.",
		"Dense retrieval embeds queries and documents.",
		"", // an empty chunk is a row too
		"Term frequency saturates in BM25: the tenth occurrence adds little.",
	}
	tk := lexical.English.NewTokenizer()
	var b lexical.Builder
	for row, text := range chunks {
		if err := b.Add(row, tk.Append(nil, text)); err != nil {
			panic(err)
		}
	}
	ix := b.Build()
	// (The scores below are bm25s's, method "lucene", k1 0.9, b 0.4, for
	// the same terms: 0.7145847 and 0.63591486.)

	// Written and read back as the index directory would.
	var file bytes.Buffer
	if _, err := ix.WriteTo(&file); err != nil {
		panic(err)
	}
	ix, err := lexical.Read(&file, int64(file.Len()))
	if err != nil {
		panic(err)
	}

	queries := [][]string{tk.Append(nil, "term frequency"), tk.Append(nil, "sparse vectors")}
	hits, err := ix.Search(queries, 3, lexical.DefaultBM25, nil)
	if err != nil {
		panic(err)
	}
	for q := range queries {
		for j := range hits.K {
			if row := hits.Rows[q*hits.K+j]; row >= 0 {
				m, _ := ix.Explain(queries[q], int(row), lexical.DefaultBM25, nil)
				fmt.Printf("query %d: row %d score %.3f matched %d terms\n", q, row, hits.Scores[q*hits.K+j], len(m))
			}
		}
	}
	// Output:
	// query 0: row 0 score 0.715 matched 2 terms
	// query 0: row 3 score 0.636 matched 2 terms
}

// Shards of one collection rank as one index when each searches with the
// statistics of all.
func ExampleStats_Add() {
	tk := lexical.English.NewTokenizer()
	shard := func(texts ...string) *lexical.Index {
		var b lexical.Builder
		for row, t := range texts {
			b.Add(row, tk.Append(nil, t))
		}
		return b.Build()
	}
	a := shard("red apples", "green apples")
	b := shard("red cars", "blue cars", "red red roses")
	queries := [][]string{tk.Append(nil, "red apples")}
	var all lexical.Stats
	all.Add(a.Stats(queries))
	all.Add(b.Stats(queries))
	fmt.Println(all.Docs, all.Tokens, all.DF["red"], all.DF["appl"])
	// bm25s over the five texts as one collection scores "red apples"
	// 0.7575033 and "red red roses" 0.35566658.
	ha, _ := a.Search(queries, 1, lexical.DefaultBM25, &all)
	hb, _ := b.Search(queries, 1, lexical.DefaultBM25, &all)
	fmt.Printf("shard a row %d %.3f, shard b row %d %.3f\n", ha.Rows[0], ha.Scores[0], hb.Rows[0], hb.Scores[0])
	// Output:
	// 5 11 3 2
	// shard a row 0 0.758, shard b row 2 0.356
}
