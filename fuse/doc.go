// Package fuse turns the chunk rankings that several indices return for a
// batch of queries into one document ranking per query.
//
// The moving parts:
//
//   - [Hits] is what one index (one window size) returned for the whole
//     batch, as flat row-major arrays: for query q, hit j (rank j, best
//     first) is the chunk of document Docs[q*K+j] with score Scores[q*K+j].
//     Document -1 marks a missing hit, as FAISS reports when an index holds
//     fewer than K vectors.
//   - [RRF], [MaxP] and [Single] fuse a batch and return a [Ranking]: per
//     query, the top documents with their fused scores and the [Evidence]
//     behind each one (window, position in that window's hit list, chunk
//     rank and chunk score), from which the caller recovers chunk ids and
//     spans.
//   - [Options] sets the number of documents kept, the RRF constant and rank
//     base, and how many goroutines share the batch.
//
// # Scores
//
// RRF: every retrieved chunk votes for its document, so
//
//	S(d) = sum over windows w, over chunks i of d in w's hits, of 1 / (r_iw + c)
//
// where r_iw is the chunk's rank in w's list counted from Options.RankBase
// (default 0; missing hits are skipped when counting) and c is Options.C
// (default 1): the top chunk of each index weighs 1. Classic RRF is c = 60
// with RankBase 1. All chunks of a document vote, not only its best chunk per
// window, so a document matched by several chunks gains. Votes are added in
// float64, window by window and rank by rank.
//
// MaxP: a document's score is the highest score of any of its chunks in the
// given windows. [Single] is MaxP over one window.
//
// # Order and evidence
//
// Documents are ranked by score, highest first; equal scores rank the lower
// document index first, so results do not depend on map or goroutine order.
// RRF evidence lists every chunk that voted, in window order then rank
// order; MaxP evidence is the first chunk (same order) with the maximal
// score.
//
// # Memory
//
// Each worker keeps dense scratch arrays of ndocs entries (accumulator,
// generation stamps, output slots) and a touched list, reused across the
// queries it fuses; nothing is allocated per hit or per query. The fusers
// are safe for concurrent use: scratch belongs to one call.
package fuse
