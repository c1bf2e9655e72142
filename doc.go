// Package msrag indexes a corpus at several chunk sizes and searches it with
// fusion of the per-size rankings: the same documents are cut into windows
// of, say, 100, 200 and 500 tokens, each window gets its own FAISS index, a
// batch of queries searches every index, and the retrieved chunks vote for
// their documents (Reciprocal Rank Fusion by default).
//
// This package holds the core nouns:
//
//   - [Build] reads a corpus and writes an [Index]: package internal/build
//     runs named stages (read, prepare, order, embed, add) under one
//     errgroup, so a failing or cancelled stage stops the others within a
//     batch, and a bounded reorder buffer keeps memory flat; the index directory is
//     staged, hashed as it is written and published whole under a lock
//     (package internal/store). [Config] says how.
//   - [Open] and [OpenWith] open an index, or shards of one corpus as one
//     ([ReadShards] reads and checks their manifests once, [OpenShards]
//     opens from them).
//   - [Index.Search] embeds queries, searches every window (flat indices'
//     scores made canonical, so shards rank as one index whatever the
//     batch) and fuses them with a fusion.Fusion (package fusion: a typed
//     rule that fusion.Parse reads from text: a fuse.Rule, the channels of
//     the index's [Layout] it fuses, and an optional query router learned
//     on training queries, which package tune writes in a fusion model
//     file; fusion.Fuse applies it to the channels' lists, which
//     [Index.Fuse] names with the documents' ids and evidence).
//   - An index's channels are of kinds of channel (package channel):
//     [Config].Channels lists them, each with its parameters, which the
//     kind describes, compares, checks in the manifest and reads from the
//     command line. msrag imports no kind: a program imports
//     github.com/msrag/msrag/channels (the built-in kinds), or the kinds
//     it wants. [Config].Tokenizer with no
//     Embedder ([LoadWindowTokenizer]) cuts the windows by a tokenizer's
//     tokens and embeds nothing; such an index ([Index.HasModel] false)
//     opens and searches without a model, with channels of kinds that read
//     texts alone, and refuses what needs a model ([ErrNoModel]).
//   - [Embedder] is the model behind an index (package embed states the
//     contract and keeps the registry of embedder kinds; [OpenEmbedder]
//     opens a model by name with the kind that claims it, [ReopenEmbedder]
//     the model an index recorded. msrag imports no kind: a program
//     imports github.com/msrag/msrag/embedders, or the kinds it wants).
//
// The parts live in their own packages: [github.com/msrag/msrag/tokenizer]
// (Hugging Face tokenizer.json in pure Go), [github.com/msrag/msrag/chunk]
// (windows over token spans), [github.com/msrag/msrag/embed] (what an
// embedder is), [github.com/msrag/msrag/onnx] (the in-process embedder),
// [github.com/msrag/msrag/remote] (embedding servers),
// [github.com/msrag/msrag/faiss] (the FAISS binding),
// [github.com/msrag/msrag/fuse] (fusion rules over whole batches, and the
// Fusion a search names),
// [github.com/msrag/msrag/router] (the learned query router),
// [github.com/msrag/msrag/eval] (metrics as trec_eval computes them, paired
// comparisons) and [github.com/msrag/msrag/corpus] (streaming readers,
// datasets, judgements). Built on this package: scatter (a search of shards
// in phases any scheduler runs, whose gather is a [Searcher] as an [Index]
// is), experiment (evaluations),
// tune (learned fusion), output (result and vector formats), report
// (results.json and report.md) and cmd/msrag (the command line).
package msrag
