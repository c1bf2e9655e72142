// Package eval scores document rankings against relevance judgements the way
// pytrec_eval (the trec_eval C code) and MTEB score them, so that numbers
// produced in Go can be compared with published retrieval results.
//
// The moving parts:
//
//   - [Qrels] holds relevance judgements, query id -> document id -> level,
//     as package corpus reads them (corpus.ReadQrels: BEIR TSV, TREC qrels,
//     Parquet; corpus.Judgements turns the rows into Qrels). [WriteQrels]
//     writes BEIR's TSV or TREC's form.
//   - [Run] holds, per query, the retrieved documents with their scores.
//     [ReadRun] and [WriteRun] read and write TREC run files
//     (qid Q0 docid rank score tag).
//   - [Evaluate] computes the metrics named by strings such as "ndcg_cut_10"
//     (see [ParseMetric] for the names) per query and averaged, into
//     [Results], which marshal to JSON.
//   - [Oracle] takes the per-query results of several configurations and
//     keeps, per query and metric, the best value and the configuration that
//     reached it: an upper bound for choosing a configuration per query.
//
// # How rankings are scored
//
// Like trec_eval, Evaluate ignores any rank given with a run: each query's
// documents are ordered by score, highest first, and equal scores are ordered
// by document id, descending in byte order ("b" before "a"). Scores are
// compared as trec_eval holds them, in single precision: two scores that
// round to the same float32 are equal (fused scores, sums of reciprocal ranks
// added in different orders, can differ in their last bits). MTEB's MRR@k
// uses the same order in double precision, and so does mrr_k here (current
// MTEB sorts by (score, id) in reverse; releases before that fix sorted by
// score alone and left ties in the order the retriever returned them, so on
// tied scores their MRR may differ).
//
// A document is relevant when its level is greater than 0; documents of the
// run that the qrels do not mention have level 0, and negative levels count
// as 0. nDCG uses the levels as gains with the discount log2(rank+1), rank
// counted from 1, and normalises by the DCG of the ideal ranking of the
// query's judged documents cut at the same depth.
//
// Which queries are scored follows pytrec_eval: a query is scored when it is
// both in the qrels and in the run (a query of the run with no hits is
// scored, all zeros). Queries only in the qrels are listed in
// [Results.Unscored] and do not enter the means, which average over the scored
// queries as MTEB does; queries only in the run are listed in
// [Results.Unjudged]. A scored query without any relevant document gets 0 for
// every metric.
package eval
