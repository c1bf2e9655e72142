package eval

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Qrels maps a query id to the judged documents of that query and their
// relevance levels. A level greater than 0 means relevant; 0 or less means
// judged not relevant.
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

// ReadQrelsFile reads a qrels file; see [ReadQrels].
func ReadQrelsFile(path string) (Qrels, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: reading qrels: %w", err)
	}
	defer f.Close()
	return ReadQrels(f, path)
}

// ReadQrels reads judgements in BEIR TSV form (three fields: query id,
// document id, integer level; the first line may be a header whose last field
// is "score") or in TREC form (four fields: query id, an ignored iteration
// field, document id, integer level). Fields are separated by white space, so
// ids cannot contain any. All lines of a file must have the same number of
// fields; blank lines are skipped. A document judged twice for one query is an
// error. name is used in error messages.
func ReadQrels(r io.Reader, name string) (Qrels, error) {
	q := Qrels{}
	first := make(map[[2]string]int) // (qid, docid) -> line, for duplicate reports
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	nf := 0
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if line == 1 && len(f) == 3 && strings.EqualFold(f[2], "score") {
			continue // BEIR header
		}
		if !utf8.ValidString(text) {
			return nil, &ParseError{name, line, fmt.Errorf("%w: invalid UTF-8", ErrSyntax)}
		}
		if nf == 0 {
			if len(f) != 3 && len(f) != 4 {
				return nil, &ParseError{name, line, fmt.Errorf("%w: want 3 fields (query-id corpus-id score) or 4 (qid 0 docid rel), got %d", ErrSyntax, len(f))}
			}
			nf = len(f)
		} else if len(f) != nf {
			return nil, &ParseError{name, line, fmt.Errorf("%w: want %d fields like the lines before, got %d", ErrSyntax, nf, len(f))}
		}
		qid, doc, lvl := f[0], f[nf-2], f[nf-1]
		rel, err := strconv.Atoi(lvl)
		if err != nil {
			return nil, &ParseError{name, line, fmt.Errorf("%w: relevance %q of query %q, document %q is not an integer", ErrSyntax, lvl, qid, doc)}
		}
		key := [2]string{qid, doc}
		if prev, ok := first[key]; ok {
			return nil, &ParseError{name, line, fmt.Errorf("%w: query %q, document %q already judged on line %d", ErrDuplicate, qid, doc, prev)}
		}
		first[key] = line
		docs := q[qid]
		if docs == nil {
			docs = map[string]int{}
			q[qid] = docs
		}
		docs[doc] = rel
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{name, line + 1, fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	return q, nil
}

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
