package main

import (
	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/onnx"
)

// batchingFlag is --batching: how the embedder groups texts into model runs.
func batchingFlag() cli.Flag {
	return &cli.StringFlag{Name: "batching", Value: onnx.BatchingAuto.String(),
		Usage: "how texts go through the model: padded (length-sorted padded batches: fastest; a dynamically quantized int8 model's vectors then depend on the batch), " +
			"single (one text per run: a vector never depends on the other texts, so shards, query batch sizes and reruns agree exactly), " +
			"or auto (single for a dynamically quantized model, padded otherwise)"}
}

// batchingOption parses --batching.
func batchingOption(c *cli.Context) (onnx.Batching, error) {
	b, err := onnx.ParseBatching(c.String("batching"))
	if err != nil {
		return 0, usagef("--batching %q: want auto, padded or single", c.String("batching"))
	}
	return b, nil
}
