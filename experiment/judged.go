package experiment

import (
	"errors"
	"fmt"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// ErrNothingJudged reports qrels under which every metric of every query
// would be 0: they judge no document relevant, or only documents the
// corpus does not hold.
var ErrNothingJudged = errors.New("the qrels judge nothing in the corpus")

// qrelsFiles names the qrels files of the split (several joined by "+").
func qrelsFiles(ds *corpus.Dataset, split string) string {
	var files []string
	for _, sp := range strings.Split(split, "+") {
		files = append(files, ds.Qrels[sp]...)
	}
	return strings.Join(files, ", ")
}

// checkRelevant fails unless the split's qrels judge some document
// relevant (a score above 0): found before any work.
func checkRelevant(ds *corpus.Dataset, split string, qrels eval.Qrels) error {
	if j := eval.Judged(qrels, func(string) bool { return true }); j.Relevant == 0 {
		return fmt.Errorf("experiment: %s judges no document relevant (every score is 0 or below) in its %d queries: every metric would be 0: %w",
			qrelsFiles(ds, split), len(qrels), ErrNothingJudged)
	}
	return nil
}

// checkJudged fails unless some query has a relevant document in the
// index: found once the index is open, before any query is searched.
func checkJudged(ds *corpus.Dataset, split string, qrels eval.Qrels, ix msrag.Searcher) error {
	have := make(map[string]bool, ix.NumDocs())
	for i := range ix.NumDocs() {
		have[ix.DocID(i)] = true
	}
	if j := eval.Judged(qrels, func(d string) bool { return have[d] }); j.Queries == 0 {
		return fmt.Errorf("experiment: none of the %d documents %s judges relevant (such as %q) is in the corpus of index %s (%d documents): "+
			"the qrels and the corpus are of different datasets, and every metric would be 0: %w",
			j.Relevant, qrelsFiles(ds, split), j.Missing, ix.Dir(), ix.NumDocs(), ErrNothingJudged)
	}
	return nil
}
