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
