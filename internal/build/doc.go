// Package build fills the windows of one index: it reads a corpus, cuts every
// document into every window, embeds each unique chunk once and adds its
// vector to the FAISS index and the chunk table of every window that lists it.
//
// [New] checks the windows against the model (a window that cannot fit fails
// there, before any work) and, for late chunking, that the model hands back
// token vectors it pools by their mean, and makes one FAISS index per window;
// [Builder.Run] runs the stages under one errgroup, connected by small
// channels:
//
//	read     batches of documents in input order, each taking a slot
//	prepare  Config.Workers goroutines: tokenize each document once, cut every
//	         window (and, for late chunking, the document's segments)
//	order    batches back in input order, documents recorded, chunks cut into
//	         embedder batches by token count
//	embed    the embedder's calls (late chunking: token vectors, pooled per
//	         chunk as they come)
//	add      each vector to the index of every window that lists its chunk
//
// Every stage checks the context between its units of work, the prepare
// workers before each document, so that a cancelled build stops within one
// document, one embedder call or one batch handed between stages.
//
// A build without an embedder (Config.Tokenizer instead) cuts the windows
// with that tokenizer exactly as a build with an embedder whose tokenizer
// it is would, and has no embed stage: each chunk's row and text go to its
// windows' chunk tables and to the kinds that read texts.
//
// [Builder.Run] hands back a [Result]: the documents in input order, the filled
// [Window]s and the counters. What the windows become (an index in memory, a
// published directory) is the caller's: package build writes no file.
//
// Its errors speak as the library that runs it ("msrag: ..."), naming the
// document, the window or the embedder call that failed.
package build
