// Package chunk cuts a tokenized document into windows of several sizes.
//
// The input is the byte span of every content token of one document, in order,
// as the tokenizer reports them without special tokens ([Span] has the same
// layout as the tokenizer's Offset; [Spans] converts a slice of any such type).
// A [Chunker] is built once from a [Config] that lists the windows and what the
// model adds around a window (its role prefix and special tokens); [New]
// rejects a configuration whose largest window cannot fit the model's maximum
// sequence length, naming both numbers, rather than letting the embedder
// truncate silently.
//
// # Windows
//
// A [Window] is a size in content tokens and a stride ([Sizes] makes windows
// without overlap), or a Truncate window: each document's first Size tokens
// and nothing more, the way an embedder truncates a document embedded whole
// ([Full], named "full", whose size New resolves to the most content tokens
// the model takes).
//
// For a window size w and stride s (s = w unless [Window.Stride] is set), the
// windows of a document of n tokens start at token 0, s, 2s, ... and cover
// tokens [start, start+w), until one reaches token n: that last window is
// moved back to cover [n-w, n), overlapping the one before it, so that every
// window of a document of n >= w tokens holds w tokens. (A tail of a token or
// two, "." or ")", embeds to a vector of no content that short queries find
// before real passages; with e5-small-v2 on NFCorpus, 46% of the top-10 hits
// of the 500-token window were such tails.) [Window.ShortTail] keeps the last
// window where the stride puts it instead, [start, n), shorter than w. So:
//
//   - the windows cover the document, each token in at least one;
//   - a window is emitted only while the previous one stopped short of the
//     end: with overlap (s < w) no window lies entirely inside the previous
//     one;
//   - a document shorter than w is one window holding all of it;
//   - a document with no tokens has no windows;
//   - a Truncate window is the first window alone: tokens [0, min(w, n)).
//
// Each window maps to the bytes of the original text from its first token's
// start to its last token's end ([Chunk.Bytes]); the text between tokens
// (spaces, punctuation the tokenizer dropped) is kept.
//
// # Unique chunks
//
// The same token range often comes out of several window sizes: a document of
// 80 tokens is a single window for w = 100, 200 and 500, and tails coincide.
// [Chunker.Split] fills a [Result] with the list of unique chunks (token range
// and byte range) and, for every window size, the indices of its chunks in
// document order, so the caller embeds each distinct text once and adds the
// vector to the index of every window size that lists it. Two chunks are the
// same when their token ranges are equal; equal text at two different places of
// a document is two chunks, since each keeps its own position.
//
// # Buffers
//
// A Chunker holds only its configuration and may be shared by goroutines. A
// Result holds all per-document state and is reused across calls: after a few
// documents Split allocates nothing. Give each worker its own Result.
package chunk
