package hub

import (
	"slices"
	"strings"
)

// pinned maps the name of an MTEB dataset repository (mteb/NAME) to the
// revision MTEB's task metadata pins for it, so that "hf:mteb/NAME" fetches
// the same data MTEB evaluates on. Each revision is the "revision" of the
// task's TaskMetadata dataset={"path": ..., "revision": ...} in
// embeddings-benchmark/mteb.
//
// LEMBQMSumRetrieval (mteb/tasks/retrieval/eng/lembqm_sum_retrieval.py,
// earlier mteb/tasks/Retrieval/eng/LEMBQMSumRetrieval.py) is not here: it
// reads dwzhu/LongEmbed, config "qmsum", at revision
// 6e346642246bfb4928c560ee08640dc84d074e8c, a repository outside mteb/ whose
// tables have columns qid/text, doc_id/text and qid/doc_id rather than the
// BEIR columns this package lays out.
var pinned = map[string]string{
	// SciFact: mteb/tasks/retrieval/eng/sci_fact_retrieval.py (earlier
	// mteb/tasks/Retrieval/eng/SciFactRetrieval.py), path "mteb/scifact".
	"scifact": "d56462d0e63a25450459c4f213e49ffdb866f7f9",
	// NFCorpus: mteb/tasks/retrieval/eng/nf_corpus_retrieval.py (earlier
	// mteb/tasks/Retrieval/eng/NFCorpusRetrieval.py), path "mteb/nfcorpus".
	"nfcorpus": "ec0fa4fe99da2ff19ca1214b7966684033a58814",
}

// PinnedRevision returns the revision MTEB pins for the dataset repository
// mteb/NAME, and whether there is one.
func PinnedRevision(name string) (string, bool) {
	rev, ok := pinned[name]
	return rev, ok
}

// Pinned returns the names (NAME of mteb/NAME) that have a pinned revision, sorted.
func Pinned() []string {
	var names []string
	for n := range pinned {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// pinnedNames lists the names with a pinned revision as "hf:mteb/NAME", sorted.
func pinnedNames() string {
	names := Pinned()
	for i, n := range names {
		names[i] = "hf:mteb/" + n
	}
	return strings.Join(names, ", ")
}
