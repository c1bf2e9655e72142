// Package fuse turns the chunk rankings that several indices return for a
// batch of queries into one document ranking per query.
//
// The moving parts:
//
//   - [Hits] is what one index (one window size) returned for the whole
//     batch, as flat row-major arrays: for query q, hit j (position j, best
//     first) is the chunk of document Docs[q*K+j] with score Scores[q*K+j].
//     Document -1 marks a missing hit, as FAISS reports when an index holds
//     fewer than K vectors.
//   - [Fuse] fuses a batch with a [Method] and returns a [Ranking]: per
//     query, the top documents with their fused scores and the [Evidence]
//     behind each one (window, position in that window's hit list, chunk
//     rank and chunk score), from which the caller recovers chunk ids and
//     spans. [RRF], [MaxP] and [Single] are shorthands for common calls.
//   - [Options] sets the number of documents kept, the RRF constant and rank
//     base, the chunk cap of RRF, the score normalisation ([Norm]) of
//     CombSUM and CombMNZ, the coefficients of the learned linear rule,
//     per-window and per-query window weights, and how many goroutines
//     share the batch.
//   - [Rule] is a method with its own parameters and their text form;
//     package fusion binds a rule to the channels of an index's layout,
//     their weights and an optional learned router.
//   - [Features] computes label-free query features of every window's list
//     (top score, gap, entropy, agreement with the other windows), and
//     [AdaptiveWeights] turns one of them into per-query window weights.
//
// # Scores
//
// In the formulas, a chunk's rank r counts the non-missing hits of its
// window's list from 0; a document's first hit in a window is its best
// chunk there (the list is in rank order), and its document rank R counts,
// from 0, the distinct documents of the window in order of their first
// hits. b is Options.RankBase (default 0), c is Options.C (default 1), and
// W(q, w) = Options.Weights[w] * Options.QueryWeights[q*len(windows)+w] is
// query q's weight of window w, 1 for a missing factor. A window of weight 0
// is left out for that query: its hits neither score nor show as evidence.
// Only documents that a window of positive weight retrieved are ranked.
//
// [MethodRRF], every retrieved chunk votes for its document:
//
//	S(d) = sum over windows w, over chunks i of d in w's hits, of W / (r_iw + b + c)
//
// The top chunk of an unweighted window weighs 1; classic RRF is c = 60
// with b = 1. All chunks of a document vote, not only its best chunk per
// window, so a document matched by several chunks gains. With Options.Cap
// = n > 0 only each document's first n chunks per window vote; the others
// still occupy their ranks.
//
// [MethodDocRRF], RRF over per-window document lists:
//
//	S(d) = sum over windows w that retrieved d of W / (R_dw + b + c)
//
// [MethodCombSUM] adds normalised per-window document scores:
//
//	S(d) = sum over windows w with a hit for the query of W * n_w(d)
//
// where n_w(d) is the score of d's first hit in w normalised by
// Options.Norm over the documents w retrieved for the query: raw
// ([NormNone]), (s - min) / (max - min) ([NormMinMax], 1 for every
// document when max == min), or (s - mean) / std with the population
// standard deviation ([NormZScore], 0 for every document when all scores
// are equal). A document w did not retrieve gets w's floor: the lowest raw
// score, 0, or the lowest z, as if it ranked just below the bottom of w's
// list. That is what "not retrieved" means with top-k lists: the document
// scored below every document w returned. Adding nothing instead would,
// under z-scores, put a missed document above the retrieved ones with
// negative z, and, under raw scores, make the penalty for a miss depend on
// where the scale has its zero. A window with no hits for the query says
// nothing and adds nothing.
//
// [MethodCombMNZ] is CombSUM times the number of windows of positive weight
// that retrieved the document:
//
//	S(d) = |{w : w retrieved d}| * CombSUM(d)
//
// [MethodLinear], the learned linear fusion, combines per window three
// features of the document with the window's coefficients (a, b, c) from
// Options.Linear:
//
//	S(d) = sum over windows w with a hit for the query of
//	       W * (a_w * z_w(d) + b_w / (R_dw + 1) + c_w * v_w(d))
//
// where z_w(d) is the z-score of CombSUM (the floor when w missed d, whose
// other two terms are then 0) and v_w(d) = sum over d's chunks in w of
// 1 / (r + 1), d's chunk RRF votes with c = 1. CombSUM with NormZScore,
// DocRRF and RRF (c = 1, b = 0) are the special cases (1,0,0), (0,1,0) and
// (0,0,1); msrag tune learns the coefficients on training queries.
//
// [MethodMaxP]: a document's score is the highest score of any of its
// chunks in the given windows; it takes no weights. [Single] is MaxP over
// one window.
//
// Sums are taken in float64 in a fixed order: window by window, and within
// a window in list order (the mean and variance of a window's scores too);
// each product is rounded before it is added. The results are therefore the
// same on every platform, for any number of workers. CombSUM and CombMNZ
// refuse infinite chunk scores, and the rules that compare scores refuse
// NaN ones ([ErrScore]); RRF and DocRRF do not read the scores.
//
// # Order and evidence
//
// Documents are ranked by score, highest first; equal scores rank the lower
// document index first, so results do not depend on map or goroutine order.
// Evidence lists, in window order:
//
//   - RRF: every chunk that voted (with Cap, only those), within a window
//     in list order;
//   - DocRRF, CombSUM, CombMNZ and Linear: the document's first hit in each
//     window that retrieved it;
//   - MaxP: the first chunk, in window then list order, with the maximal
//     score.
//
// # Query features
//
// [Features] describes each window's answer to each query from the window's
// first FeatureDepth (10) distinct documents, each at its best chunk: the
// top score, the gap between the top and the last of them, the entropy of
// the softmax of their scores (temperature 0.05, divided by log n, so 0
// when one document stands out and 1 when all score alike), and the share
// of them that another window also has among its top documents. These are
// query performance predictors: they need no labels. [AdaptiveWeights]
// weighs window w for query q by nw * softmax_w(±feature/t), the sign
// favouring a lower entropy and a higher value of the others, so that the
// weights of a query average 1; msrag's "adapt" fusion parameter uses it.
//
// # Memory
//
// Each worker keeps flat scratch arrays of ndocs entries (accumulator,
// query and window stamps, per-window counts, output slots) and touched and
// first-hit lists, reused across the queries it fuses; nothing is allocated
// per hit or per query. A query costs one pass over its hits to check them,
// one or two to score (CombSUM and CombMNZ: one more per window, and one
// over the touched documents per window), and one to gather evidence. The
// fusers are safe for concurrent use: scratch belongs to one call.
package fuse
