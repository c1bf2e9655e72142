package eval

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Hit is one retrieved document of a query.
type Hit struct {
	Doc   string  `json:"doc"`
	Score float64 `json:"score"`
}

// Run maps a query id to its retrieved documents, in any order: [Evaluate]
// orders them itself (see the package documentation).
type Run map[string][]Hit

// SortHits orders hits the way trec_eval ranks them: score descending, equal
// scores by document id descending in byte order. trec_eval keeps scores in
// single precision (a C float), so scores that round to the same float32 are
// equal here too: sums of reciprocal ranks added in different orders can
// differ in their last bits, and trec_eval ranks such documents by id.
func SortHits(hits []Hit) {
	slices.SortFunc(hits, compareHits)
}

func compareHits(a, b Hit) int {
	if c := cmp.Compare(float32(b.Score), float32(a.Score)); c != 0 {
		return c
	}
	return strings.Compare(b.Doc, a.Doc)
}

// compareHitsExact is MTEB's order for MRR@k: score descending in double
// precision, equal scores by document id descending.
func compareHitsExact(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(b.Doc, a.Doc)
}

// ReadRunFile reads a TREC run file; see [ReadRun].
func ReadRunFile(path string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: reading run: %w", err)
	}
	defer f.Close()
	return ReadRun(f, path)
}

// ReadRun reads a TREC run: one line per retrieved document,
// "qid Q0 docid rank score tag", fields separated by white space. The second
// field and the tag are not checked; the rank must be an integer but is
// otherwise ignored, as trec_eval ignores it. Blank lines are skipped. A
// document listed twice for one query, or a score that is not a finite
// number, is an error. Hits keep the order of the file. name is used in error
// messages.
func ReadRun(r io.Reader, name string) (Run, error) {
	run := Run{}
	seen := make(map[[2]string]int)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if len(f) != 6 {
			return nil, &ParseError{name, line, fmt.Errorf("%w: want 6 fields (qid Q0 docid rank score tag), got %d", ErrSyntax, len(f))}
		}
		if !utf8.ValidString(text) {
			return nil, &ParseError{name, line, fmt.Errorf("%w: invalid UTF-8", ErrSyntax)}
		}
		qid, doc := f[0], f[2]
		if _, err := strconv.Atoi(f[3]); err != nil {
			return nil, &ParseError{name, line, fmt.Errorf("%w: rank %q of query %q, document %q is not an integer", ErrSyntax, f[3], qid, doc)}
		}
		s, err := strconv.ParseFloat(f[4], 64)
		if err != nil || math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, &ParseError{name, line, fmt.Errorf("%w: score %q of query %q, document %q is not a finite number", ErrScore, f[4], qid, doc)}
		}
		key := [2]string{qid, doc}
		if prev, ok := seen[key]; ok {
			return nil, &ParseError{name, line, fmt.Errorf("%w: query %q, document %q already listed on line %d", ErrDuplicate, qid, doc, prev)}
		}
		seen[key] = line
		run[qid] = append(run[qid], Hit{Doc: doc, Score: s})
	}
	if err := sc.Err(); err != nil {
		return nil, &ParseError{name, line + 1, fmt.Errorf("%w: %w", ErrSyntax, err)}
	}
	return run, nil
}

// WriteRun writes run as a TREC run file with the given tag: queries in
// sorted order, each query's hits in trec_eval's order (see [SortHits]) with
// ranks from 1, scores in the shortest form that reads back exactly. run is
// not modified. Ids and the tag must not contain white space.
func WriteRun(w io.Writer, run Run, tag string) error {
	if err := checkID("tag", tag); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var hits []Hit
	buf := make([]byte, 0, 128)
	for _, qid := range sortedKeys(run) {
		if err := checkID("query", qid); err != nil {
			return err
		}
		hits = append(hits[:0], run[qid]...)
		SortHits(hits)
		for i, h := range hits {
			if err := checkID("document", h.Doc); err != nil {
				return err
			}
			if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
				return fmt.Errorf("%w: query %q, document %q has score %v", ErrScore, qid, h.Doc, h.Score)
			}
			buf = append(buf[:0], qid...)
			buf = append(buf, " Q0 "...)
			buf = append(buf, h.Doc...)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(i+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, h.Score, 'g', -1, 64)
			buf = append(buf, ' ')
			buf = append(buf, tag...)
			buf = append(buf, '\n')
			bw.Write(buf)
		}
	}
	return bw.Flush()
}
