package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is a family of metrics; a [Metric] is a kind and a cutoff.
type Kind int

// The metric families. Cutoff k counts the top k documents of the ranking.
const (
	// NDCGCut is pytrec_eval's "ndcg_cut_k": DCG of the top k over the DCG of
	// the ideal top k.
	NDCGCut Kind = iota
	// MAPCut is pytrec_eval's "map_cut_k": the sum of the precision at the rank
	// of each relevant document within the top k, over the number of relevant
	// documents of the query.
	MAPCut
	// Recall is pytrec_eval's "recall_k": relevant documents in the top k over
	// relevant documents of the query.
	Recall
	// Precision is pytrec_eval's "P_k": relevant documents in the top k over k
	// (over k even when fewer than k documents were retrieved).
	Precision
	// MRR is MTEB's MRR@k, named "mrr_k": 1/rank of the first relevant document
	// within the top k, 0 when there is none.
	MRR
	// CDR is correct-document recall, "cdr_k": 1 when any relevant document is
	// in the top k, else 0. Its mean is the share of queries answered.
	CDR
	// RecipRank is pytrec_eval's "recip_rank": 1/rank of the first relevant
	// document anywhere in the ranking. It takes no cutoff.
	RecipRank
)

var kindNames = [...]string{NDCGCut: "ndcg_cut", MAPCut: "map_cut", Recall: "recall", Precision: "P", MRR: "mrr", CDR: "cdr", RecipRank: "recip_rank"}

// String returns the family's name prefix, as in "ndcg_cut".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Metric is a parsed metric name.
type Metric struct {
	Kind Kind
	K    int // cutoff; 0 for RecipRank
}

// String returns the metric's name, as accepted by [ParseMetric].
func (m Metric) String() string {
	if m.Kind == RecipRank {
		return "recip_rank"
	}
	return m.Kind.String() + "_" + strconv.Itoa(m.K)
}

// ParseMetric parses a metric name: "ndcg_cut_k", "map_cut_k", "recall_k",
// "P_k", "mrr_k" (MTEB's MRR@k; "recip_rank_k" is accepted as a synonym and
// parses to the same metric), "cdr_k" with k a positive integer, or
// "recip_rank".
func ParseMetric(name string) (Metric, error) {
	if name == "recip_rank" {
		return Metric{Kind: RecipRank}, nil
	}
	i := strings.LastIndexByte(name, '_')
	if i < 0 {
		return Metric{}, fmt.Errorf("%w: %q", ErrMetric, name)
	}
	k, err := strconv.Atoi(name[i+1:])
	if err != nil || k <= 0 || name[i+1] == '+' || name[i+1] == '0' {
		return Metric{}, fmt.Errorf("%w: %q: cutoff must be a positive integer", ErrMetric, name)
	}
	switch name[:i] {
	case "ndcg_cut":
		return Metric{NDCGCut, k}, nil
	case "map_cut":
		return Metric{MAPCut, k}, nil
	case "recall":
		return Metric{Recall, k}, nil
	case "P":
		return Metric{Precision, k}, nil
	case "mrr", "recip_rank":
		return Metric{MRR, k}, nil
	case "cdr":
		return Metric{CDR, k}, nil
	}
	return Metric{}, fmt.Errorf("%w: %q", ErrMetric, name)
}

// MTEBCutoffs are the cutoffs MTEB reports for retrieval.
var MTEBCutoffs = []int{1, 3, 5, 10, 20, 100, 1000}

// CDRCutoffs are the cutoffs of correct-document recall in [DefaultMetrics].
var CDRCutoffs = []int{1, 2, 3, 5, 10}

// DefaultMetrics returns the metrics [Evaluate] computes when given none:
// ndcg_cut, map_cut, recall, P and mrr at [MTEBCutoffs], then cdr at
// [CDRCutoffs].
func DefaultMetrics() []string {
	var names []string
	for _, kind := range []Kind{NDCGCut, MAPCut, Recall, Precision, MRR} {
		for _, k := range MTEBCutoffs {
			names = append(names, Metric{kind, k}.String())
		}
	}
	for _, k := range CDRCutoffs {
		names = append(names, Metric{CDR, k}.String())
	}
	return names
}
