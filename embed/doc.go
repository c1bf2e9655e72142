// Package embed says what msrag asks of an embedding model, as plain data and
// one small interface, so that a model can be implemented without importing the
// rest of msrag (the way database/sql/driver stands apart from database/sql).
//
// The moving parts:
//
//   - [Embedder] embeds query texts ([Embedder.Embed], truncated to fit) and
//     document chunks ([Embedder.EmbedChunks], exact: a chunk that does not
//     fit is an error), and closes its resources. The in-process ONNX model
//     (package onnx), an HTTP embedding server and the test embedders all
//     implement it.
//   - [Spec] describes a model as data: its name and file checksums (what an
//     index records to refuse another model), the vector size, the longest
//     sequence, the role prefixes and how many tokens they and the special
//     tokens take.
//   - [Role] says what a text is for: [Query] or [Passage]; models such as e5
//     put a different prefix in front of each.
//   - [Chunk] is one document window to embed: its content token ids (no
//     prefix, no special tokens) and the same content as text, so an embedder
//     that runs the model itself uses the ids and one that calls a server
//     sends the text.
package embed
