package onnx_test

import (
	"fmt"

	"github.com/msrag/msrag/onnx"
)

func ExampleBuiltin() {
	m, _ := onnx.Builtin("e5-small-v2")
	fmt.Println(m.Dims, m.MaxTokens, m.Pooling, m.Normalize)
	fmt.Printf("%q %q\n", m.Prefix(onnx.Query), m.Prefix(onnx.Passage))
	// Output:
	// 384 512 mean true
	// "query: " "passage: "
}

func ExampleBuiltinModels() {
	for _, m := range onnx.BuiltinModels() {
		fmt.Println(m.Name, m.Pooling)
	}
	// Output:
	// all-minilm-l6-v2 mean
	// all-minilm-l6-v2-int8 mean
	// bge-small-en-v1.5 cls
	// bge-small-en-v1.5-int8 cls
	// e5-small-v2 mean
	// e5-small-v2-int8 mean
}
