// Package tune learns fusion on labelled training queries, never on the
// queries it is evaluated on.
//
// A [Set] is a split's queries searched once: every window's chunk lists,
// the query vectors and the judgements. [FitLinear] fits the coefficients of
// the linear rule (fuse.MethodLinear: per window, a document's z-scored
// score, 1/(docrank+1) and its chunk votes) by coordinate ascent on mean
// nDCG@10, from the rules it generalises (CombSUM-z, DocRRF, RRF) as
// starting points. [FitRouter] fits a query router (package router) on soft
// targets from each training query's per-window nDCG@10, choosing its L2
// penalty by k-fold cross-validation of the end metric (the linear rule
// weighted by the router) on the training queries. [Fit] does both and
// returns a [FusionModel]; [CrossValidate] fits on k-1 folds and ranks
// the held-out fold, for a dataset without a training split, keeping all
// queries of a group (a meeting, say) in one fold.
package tune
