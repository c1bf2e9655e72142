package build

import (
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/late"
)

// docBatch is a batch of documents on its way from read to order, with the
// chunks prepare cut from them.
type docBatch struct {
	seq   int   // place in input order
	base  int32 // document index of docs[0]
	docs  []corpus.Doc
	items []item
	segs  []segment // a Late build's segments, in document order
	// docPreps are, parallel to docs, what each kind's Preparer made of the
	// document's whole text (nil for a kind without one).
	docPreps [][]channel.Prepared
}

// segment is one span of a document a Late build encodes in one pass.
type segment struct {
	doc  int32
	span chunk.Span // content tokens of the document
	ids  []int32    // their ids
}

// item is one unique chunk on its way to the embedder.
type item struct {
	doc                int32
	tokStart, tokEnd   int32
	byteStart, byteEnd int64
	member             uint64  // bit i: the chunk is a window of Builder.windows[i]
	ids                []int32 // content token ids (a slice of the document's)
	text               string  // the chunk's text (a substring of the document's)
	// preps are what each kind's Preparer made of the text (nil for a kind
	// without one).
	preps []channel.Prepared
	// pieces say, in a Late build, which segments' rows the chunk pools;
	// their Seg indexes the segments of the batch that holds the item.
	pieces []late.Piece
}

// embedBatch is a batch of chunks for the embedder, and then their vectors,
// with the documents recorded since the batch before (docPreps: what the
// kinds made of their whole texts), in input order.
type embedBatch struct {
	items    []item
	segs     []segment
	tokens   int64
	vecs     []float32
	docIDs   []string
	docPreps [][]channel.Prepared
}
