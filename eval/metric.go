package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// Family is a family of metrics; a [Metric] is a family and a cutoff.
type Family int

// The metric families. Cutoff k counts the top k documents of the ranking.
const (
	// NDCGCut is pytrec_eval's "ndcg_cut_k": DCG of the top k over the DCG of
	// the ideal top k.
	NDCGCut Family = iota
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

// families describes each family: adding a metric is a Family above, its row
// here and its case in scorer.metric.
var families = [...]struct {
	name  string // the name prefix, as in "ndcg_cut_10"
	label string // the family in reports, as in "nDCG@10"; "": name
	mteb  string // MTEB's score name prefix, as in "ndcg_at_10"; "": none
}{
	NDCGCut:   {"ndcg_cut", "nDCG", "ndcg_at_"},
	MAPCut:    {"map_cut", "MAP", "map_at_"},
	Recall:    {"recall", "", "recall_at_"},
	Precision: {"P", "", "precision_at_"},
	MRR:       {"mrr", "MRR", "mrr_at_"},
	CDR:       {"cdr", "", "hit_rate_at_"},
	RecipRank: {"recip_rank", "", ""},
}

// String returns the family's name prefix, as in "ndcg_cut".
func (k Family) String() string {
	if k >= 0 && int(k) < len(families) {
		return families[k].name
	}
	return fmt.Sprintf("Family(%d)", int(k))
}

// Label returns the family's name in reports: "nDCG" (nDCG@10), "MAP",
// "MRR", else its name prefix.
func (k Family) Label() string {
	if k >= 0 && int(k) < len(families) && families[k].label != "" {
		return families[k].label
	}
	return k.String()
}

// MTEBName returns the prefix of MTEB's score names of the family (the keys
// of mteb's make_score_dict: "ndcg_at_" for ndcg_cut; cdr is pytrec_eval's
// success, MTEB's hit_rate), or "" when MTEB reports none (recip_rank).
func (k Family) MTEBName() string {
	if k >= 0 && int(k) < len(families) {
		return families[k].mteb
	}
	return ""
}

// Metric is a parsed metric name.
type Metric struct {
	Family Family
	K      int // cutoff; 0 for RecipRank
}

// String returns the metric's name, as accepted by [ParseMetric].
func (m Metric) String() string {
	if m.Family == RecipRank {
		return "recip_rank"
	}
	return m.Family.String() + "_" + strconv.Itoa(m.K)
}

// ParseMetric parses a metric name: "ndcg_cut_k", "map_cut_k", "recall_k",
// "P_k", "mrr_k" (MTEB's MRR@k; "recip_rank_k" is accepted as a synonym and
// parses to the same metric), "cdr_k" with k a positive integer, or
// "recip_rank".
func ParseMetric(name string) (Metric, error) {
	if name == "recip_rank" {
		return Metric{Family: RecipRank}, nil
	}
	i := strings.LastIndexByte(name, '_')
	if i < 0 {
		return Metric{}, fmt.Errorf("%w: %q", ErrMetric, name)
	}
	k, err := strconv.Atoi(name[i+1:])
	if err != nil || k <= 0 || name[i+1] == '+' || name[i+1] == '0' {
		return Metric{}, fmt.Errorf("%w: %q: cutoff must be a positive integer", ErrMetric, name)
	}
	prefix := name[:i]
	if prefix == "recip_rank" {
		return Metric{MRR, k}, nil
	}
	for f, info := range families {
		if Family(f) != RecipRank && info.name == prefix {
			return Metric{Family(f), k}, nil
		}
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
	for _, f := range []Family{NDCGCut, MAPCut, Recall, Precision, MRR} {
		for _, k := range MTEBCutoffs {
			names = append(names, Metric{f, k}.String())
		}
	}
	for _, k := range CDRCutoffs {
		names = append(names, Metric{CDR, k}.String())
	}
	return names
}
