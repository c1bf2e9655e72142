package fuse_test

import (
	"fmt"

	"github.com/msrag/msrag/fuse"
)

func ExampleRRF() {
	// One query, two windows with three hits each; 4 documents.
	small := fuse.Hits{K: 3, Docs: []int32{2, 0, 2}, Scores: []float32{0.91, 0.88, 0.80}}
	large := fuse.Hits{K: 3, Docs: []int32{0, 3, -1}, Scores: []float32{0.86, 0.70, 0}}
	r, err := fuse.RRF([]fuse.Hits{small, large}, 4, fuse.Options{K: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	docs, scores := r.Query(0)
	for i, d := range docs {
		fmt.Printf("doc %d score %.4f evidence %+v\n", d, scores[i], r.EvidenceOf(0, i))
	}
	// Output:
	// doc 0 score 1.5000 evidence [{Window:0 Pos:1 Rank:1 Score:0.88} {Window:1 Pos:0 Rank:0 Score:0.86}]
	// doc 2 score 1.3333 evidence [{Window:0 Pos:0 Rank:0 Score:0.91} {Window:0 Pos:2 Rank:2 Score:0.8}]
	// doc 3 score 0.5000 evidence [{Window:1 Pos:1 Rank:1 Score:0.7}]
}

func ExampleFuse() {
	// The hits of ExampleRRF, fused per document: DocRRF ranks each window's
	// distinct documents; CombMNZ sums min-max normalised scores (0 where a
	// window missed the document) times the number of windows that found it.
	small := fuse.Hits{K: 3, Docs: []int32{2, 0, 2}, Scores: []float32{0.91, 0.88, 0.80}}
	large := fuse.Hits{K: 3, Docs: []int32{0, 3, -1}, Scores: []float32{0.86, 0.70, 0}}
	for _, m := range []fuse.Method{fuse.MethodDocRRF, fuse.MethodCombMNZ} {
		r, err := fuse.Fuse(m, []fuse.Hits{small, large}, 4, fuse.Options{K: 3, Norm: fuse.NormMinMax})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(m)
		docs, scores := r.Query(0)
		for i, d := range docs {
			fmt.Printf("doc %d score %.4f evidence %+v\n", d, scores[i], r.EvidenceOf(0, i))
		}
	}
	// Output:
	// docrrf
	// doc 0 score 1.5000 evidence [{Window:0 Pos:1 Rank:1 Score:0.88} {Window:1 Pos:0 Rank:0 Score:0.86}]
	// doc 2 score 1.0000 evidence [{Window:0 Pos:0 Rank:0 Score:0.91}]
	// doc 3 score 0.5000 evidence [{Window:1 Pos:1 Rank:1 Score:0.7}]
	// combmnz
	// doc 0 score 2.0000 evidence [{Window:0 Pos:1 Rank:1 Score:0.88} {Window:1 Pos:0 Rank:0 Score:0.86}]
	// doc 2 score 1.0000 evidence [{Window:0 Pos:0 Rank:0 Score:0.91}]
	// doc 3 score 0.0000 evidence [{Window:1 Pos:1 Rank:1 Score:0.7}]
}
