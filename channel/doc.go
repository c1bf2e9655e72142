// Package channel is what a channel of an index is, and the one place where
// kinds of channel plug into msrag.
//
// An index holds channels: ranked lists of its chunks per query. A channel
// is a [Kind] of search over a window's chunks (or over whole documents).
// Every kind is one implementation of [Kind], registered by name
// ([Register]), as embedder kinds and corpus formats are. A kind builds its
// files during a build ([Kind.NewBuilder]), opens them from a shard
// ([Kind.Open]), searches a batch of [Queries] (their texts and/or
// vectors, as its [Needs] say) for each of its channels' top rows, and
// declares the corpus statistics it needs to rank exactly across shards
// ([Stats]: none for dense vectors; for BM25 the documents, their total
// length and the document frequencies of the query terms), which add up
// over shards.
//
// A [Layout] is an index's channels in order; fusion groups (windows=dense,
// windows=lexical, windows=all, or any registered kind's name) and whether a
// search needs query vectors come from the kinds, never from channel names.
//
// Every kind's search of a shard returns, per channel and query, the k best
// rows in the one canonical order ([Compare]: score descending, then
// document, then byte start), whatever order its engine returns ties in
// ([Top] searches further while a tie at the k-th place may run past the
// list). [Merge] then merges shards' lists exactly: sharded search ranks as
// one index, ties at the boundary included, whether the shards were
// searched in this process or in others.
//
// A kind's core is its name, what it needs, and how it builds
// ([Kind.NewBuilder], through [BuilderOf] of its typed [Rows]) and opens
// its part of a shard; the rest of it is data ([Traits]: its place in a
// layout, its channels' names and group, which builds make it unasked).
// A kind owns its parameters, a value of its own type ([Params]): their
// [Settings], which an index's identity records and compares for every
// kind, their checks, and the table of their command-line flags
// ([Params.Flags], [Params.Parse]); the kind reads its section of a
// manifest back ([Kind.Recorded]). A build asks for a kind by its
// parameters.
//
// The built-in kinds are package dense (FAISS windows, the kind "dense") and
// package bm25 (BM25 windows and whole documents, "lexical"), both below this
// package; package channels registers them, and the core imports none.
package channel
