package eval

import "slices"

// Rules are scoring rules a benchmark applies to a run before its metrics,
// beyond the metrics' definitions: MTEB's retrieval tasks set them
// (AbsTaskRetrieval.ignore_identical_ids and skip_first_result). The zero
// value applies none.
type Rules struct {
	// IgnoreIdenticalIDs drops every retrieved document whose id equals
	// its query's id, as MTEB does for tasks whose queries are documents of
	// their own corpus (ArguAna: a query retrieves itself first, and it is
	// not judged relevant to itself).
	IgnoreIdenticalIDs bool `json:"ignore_identical_ids"`
	// SkipFirstResult drops each query's highest-scoring document, after
	// IgnoreIdenticalIDs, as MTEB does for tasks whose query is always its
	// own first result under another id. Of documents tied on the highest
	// score the last by document id goes (the first in Evaluate's order);
	// MTEB drops the first its retriever returned.
	SkipFirstResult bool `json:"skip_first_result"`
}

// Any reports whether r applies any rule.
func (r Rules) Any() bool { return r.IgnoreIdenticalIDs || r.SkipFirstResult }

// Apply returns run as the rules score it, and the number of hits dropped.
// run itself is not changed; with no rule to apply it is returned as it is.
func (r Rules) Apply(run Run) (Run, int) {
	if !r.Any() {
		return run, 0
	}
	out, dropped := make(Run, len(run)), 0
	for qid, hits := range run {
		kept := make([]Hit, 0, len(hits))
		for _, h := range hits {
			if r.IgnoreIdenticalIDs && h.Doc == qid {
				continue
			}
			kept = append(kept, h)
		}
		if r.SkipFirstResult && len(kept) > 0 {
			first := slices.MinFunc(kept, compareHitsExact)
			kept = slices.DeleteFunc(kept, func(h Hit) bool { return h == first })
		}
		dropped += len(hits) - len(kept)
		out[qid] = kept
	}
	return out, dropped
}
