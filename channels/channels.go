// Package channels registers every built-in kind of channel in package
// channel's registry, for a program that wants them all:
//
//	import _ "github.com/msrag/msrag/channels"
//
// The kinds are package channel/dense (FAISS over the model's vectors,
// "dense") and package channel/bm25 (BM25 over the chunks' and documents'
// texts, "lexical"). The core (package msrag) imports no kind: a program
// imports the kinds it builds and opens, as database/sql drivers are
// imported, and gives a build their parameters, values of the kinds' own
// types (dense.Params, bm25.Config).
package channels

import (
	_ "github.com/msrag/msrag/channel/bm25"  // registers "lexical"
	_ "github.com/msrag/msrag/channel/dense" // registers "dense"
)
