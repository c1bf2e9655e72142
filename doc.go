// Package msrag indexes a corpus at several chunk sizes and searches it with
// Reciprocal Rank Fusion: the same documents are cut into windows of, say, 100,
// 200 and 500 tokens, each window size gets its own FAISS index, a batch of
// queries searches every index, and the retrieved chunks vote for their
// documents.
//
// The parts live in their own packages: [github.com/msrag/msrag/tokenizer]
// (Hugging Face tokenizer.json in pure Go), [github.com/msrag/msrag/chunk]
// (windows over token spans), [github.com/msrag/msrag/onnx] (the embedder),
// [github.com/msrag/msrag/faiss] (the FAISS binding),
// [github.com/msrag/msrag/fuse] (RRF and MaxP over whole batches),
// [github.com/msrag/msrag/eval] (metrics as trec_eval computes them) and
// [github.com/msrag/msrag/corpus] (streaming readers).
package msrag
