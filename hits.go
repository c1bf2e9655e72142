package msrag

import "github.com/msrag/msrag/chunk"

// SearchOptions says how to search. The zero value searches every window for
// its top 100 chunks and fuses them with RRF (c = 1, ranks from 0) into 10
// documents.
type SearchOptions struct {
	// K is the number of documents returned per query; default 10.
	K int
	// WindowK is the number of chunks each window's index returns; default 100.
	WindowK int
	// Fusion is the rule that turns the windows' chunk lists into documents.
	Fusion Fusion
	// SkipTerms leaves Evidence.Terms nil. Finding the query terms a
	// chunk holds (channel.Explainer) searches its terms again, which can
	// cost more than the search; a caller that does not show them (msrag
	// search's TREC output) skips it.
	SkipTerms bool
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.K <= 0 {
		o.K = 10
	}
	if o.WindowK <= 0 {
		o.WindowK = 100
	}
	return o
}

// Clamp returns opts with its defaults filled in, K at most the number of
// documents and WindowK at most MaxWindowK, so that what a search allocates
// follows the index, not the numbers asked for.
func (ix *Index) Clamp(opts SearchOptions) SearchOptions {
	opts = opts.withDefaults()
	opts.K = min(opts.K, max(ix.NumDocs(), 1))
	opts.WindowK = min(opts.WindowK, ix.MaxWindowK())
	return opts
}

// Hit is one document in a query's fused ranking.
type Hit struct {
	DocID    string
	Doc      int     // document index in the index
	Score    float64 // fused score
	Rank     int     // from 1
	Evidence []Evidence
}

// Evidence is a chunk that voted for a document.
type Evidence struct {
	// Channel is the channel that ranked the chunk: its kind and window
	// (a whole-document channel has the zero window, and spans the
	// document from 0 to the end of its last token).
	Channel    Channel
	Window     chunk.Window // the window the chunk came from (Channel.Window)
	ChunkRank  int          // the chunk's rank in that window's list, from 1
	ChunkScore float32      // its similarity (inner product; minus the distance for L2)
	Start, End int64        // its byte span in the document's text (title + " " + text)
	// Terms are, for a chunk of a kind that explains its hits
	// (channel.Explainer), the query's terms it holds, in the query's
	// order; nil for another kind's.
	Terms []string
}
