package eval

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Qrels maps a query id to the judged documents of that query and their
// relevance levels. A level greater than 0 means relevant; 0 or less means
// judged not relevant. Package corpus reads qrels files (corpus.ReadQrels,
// corpus.Judgements); this package takes them parsed.
type Qrels map[string]map[string]int

// QrelsFormat selects the layout [WriteQrels] writes.
type QrelsFormat int

const (
	// QrelsTSV is BEIR's layout: a "query-id\tcorpus-id\tscore" header, then
	// one tab-separated line per judgement.
	QrelsTSV QrelsFormat = iota
	// QrelsTREC is trec_eval's layout: "qid 0 docid rel" per line.
	QrelsTREC
)

// WriteQrels writes q in the given format, queries and documents in sorted
// order. Ids must not contain white space.
func WriteQrels(w io.Writer, q Qrels, format QrelsFormat) error {
	bw := bufio.NewWriter(w)
	if format == QrelsTSV {
		bw.WriteString("query-id\tcorpus-id\tscore\n")
	}
	for _, qid := range sortedKeys(q) {
		if err := checkID("query", qid); err != nil {
			return err
		}
		docs := q[qid]
		for _, doc := range sortedKeys(docs) {
			if err := checkID("document", doc); err != nil {
				return err
			}
			switch format {
			case QrelsTSV:
				fmt.Fprintf(bw, "%s\t%s\t%d\n", qid, doc, docs[doc])
			case QrelsTREC:
				fmt.Fprintf(bw, "%s 0 %s %d\n", qid, doc, docs[doc])
			default:
				return fmt.Errorf("eval: unknown qrels format %d", format)
			}
		}
	}
	return bw.Flush()
}

func checkID(what, id string) error {
	if id == "" || len(strings.Fields(id)) != 1 || strings.Fields(id)[0] != id {
		return fmt.Errorf("%w: %s id %q is empty or contains white space", ErrID, what, id)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Judgement counts what qrels judge relevant (a score above 0) against a
// corpus: Relevant judgements, Found of them in the corpus, Queries with at
// least one relevant document found, and Missing, the smallest id of a
// relevant document not found ("" when all are).
type Judgement struct {
	Relevant, Found, Queries int
	Missing                  string
}

// Judged counts q's relevant judgements against the corpus whose ids has
// reports. Every metric of a query is 0 unless Queries > 0: qrels that
// judge nothing relevant, or only documents of another corpus.
func Judged(q Qrels, has func(doc string) bool) Judgement {
	var j Judgement
	for _, docs := range q {
		hit := false
		for d, rel := range docs {
			if rel <= 0 {
				continue
			}
			j.Relevant++
			if has(d) {
				j.Found++
				hit = true
			} else if j.Missing == "" || d < j.Missing {
				j.Missing = d
			}
		}
		if hit {
			j.Queries++
		}
	}
	return j
}
