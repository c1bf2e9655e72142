package faiss_test

import (
	"fmt"

	"github.com/msrag/msrag/faiss"
)

// An exact inner-product index over four 2-d vectors, searched with two
// queries at once.
func ExampleIndex_Search() {
	ix, err := faiss.New(2, "Flat", faiss.InnerProduct)
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	if err := ix.Add([]float32{
		1, 0, // id 0
		0, 1, // id 1
		0.6, 0.8, // id 2
		-1, 0, // id 3
	}); err != nil {
		panic(err)
	}
	dist, labels, err := ix.Search([]float32{1, 0, 0, 2}, 2)
	if err != nil {
		panic(err)
	}
	for q := range 2 {
		fmt.Printf("query %d: ids %v scores %.1f\n", q, labels[q*2:q*2+2], dist[q*2:q*2+2])
	}
	// Output:
	// query 0: ids [0 2] scores [1.0 0.6]
	// query 1: ids [1 2] scores [2.0 1.6]
}

// Vectors whose length is not a multiple of the dimension are refused
// before FAISS sees them.
func ExampleIndex_Add_error() {
	ix, err := faiss.New(4, "Flat", faiss.L2)
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	fmt.Println(ix.Add(make([]float32, 6)))
	// Output:
	// faiss: add: invalid argument: 6 floats is not a multiple of dimension 4
}

// An index survives a round trip through bytes, as it would through a file.
func ExampleReadBytes() {
	ix, err := faiss.New(3, "Flat", faiss.L2)
	if err != nil {
		panic(err)
	}
	defer ix.Close()
	if err := ix.Add([]float32{0, 0, 0, 1, 1, 1}); err != nil {
		panic(err)
	}
	b, err := ix.Bytes()
	if err != nil {
		panic(err)
	}
	back, err := faiss.ReadBytes(b)
	if err != nil {
		panic(err)
	}
	defer back.Close()
	_, labels, err := back.Search([]float32{0.9, 0.9, 0.9}, 1)
	fmt.Println(back.Ntotal(), labels, err)
	// Output:
	// 2 [1] <nil>
}
