// Package late cuts documents into the segments a late-chunking build encodes
// and pools each window's vector out of the segments' token vectors.
//
// Late chunking (Günther et al. 2024, "Late Chunking: Contextual Chunk
// Embeddings Using Long-Context Embedding Models") runs the encoder once over a
// long span of a document and takes a window's vector as the mean of the token
// vectors of the window's tokens, so every window size comes from the same pass
// and each window's vector has seen its context.
//
// A document of at most one segment's content tokens is one segment. A longer
// one is cut into segments of the model's content maximum, consecutive ones
// sharing an overlap, the last moved back to end with the document
// ([Segments]). A window takes its tokens from the segment that holds all of it
// with the most context on both sides; a window no segment holds whole (one
// longer than the overlap, across a border) takes each token from the segment
// that holds that token with the most context ([Pieces]).
//
// Special tokens and the role prefix follow the paper: a window that starts a
// segment also pools the rows in front of the content ([CLS] and the prefix,
// such as e5's "passage: "), and one that ends a segment also pools the rows
// after it ([SEP]). A window that covers a whole segment is then pooled over
// every row of the pass: for a document that fits one segment, its whole-
// document window equals the independent embedding of the same tokens.
package late
