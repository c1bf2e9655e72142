package corpus

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Qrel is one relevance judgement: document DocID has relevance Score for
// query QueryID.
type Qrel struct {
	QueryID string
	DocID   string
	Score   int
}

// ReadQrels reads relevance judgements from a TSV file (see [ParseQrels];
// gzip-compressed too) or from a Parquet file (or directory of them) with
// columns "query-id", "corpus-id" and "score". The pairs come back in file
// order; a pair given twice is an error, and so is a file without any.
func ReadQrels(path string, opts Options) ([]Qrel, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	f, err := detect(path, opts.Format)
	if err != nil {
		return nil, err
	}
	var out []Qrel
	switch f {
	case FormatParquet:
		out, err = readQrelsParquetPath(path, opts)
	case FormatTSV, FormatLines:
		out, err = readQrelsTSV(path)
	default:
		return nil, fmt.Errorf("corpus: %s: qrels must be TSV or Parquet, not %s: %w", path, f, ErrFormat)
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("corpus: %s: no judgements: %w", path, ErrEmpty)
	}
	return out, nil
}

func readQrelsParquetPath(path string, opts Options) ([]Qrel, error) {
	paths := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if paths, err = parquetFiles(path); err != nil {
			return nil, err
		}
	}
	var out []Qrel
	var err error
	seen := map[qrelKey]string{}
	for _, p := range paths {
		if out, err = readQrelsParquet(p, opts, out, seen); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readQrelsTSV(path string) ([]Qrel, error) {
	lr, err := openLines(path, 0)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	p := newQrelsParser(path)
	for {
		line, err := lr.next()
		if err == io.EOF {
			return p.out, nil
		}
		if err != nil {
			return nil, err
		}
		if err := p.line(lr.line, line); err != nil {
			return nil, err
		}
	}
}

// ParseQrels reads judgements in BEIR's TSV form (query-id, corpus-id and an
// integer score; a first line whose score is not an integer is a header, such
// as BEIR's "query-id corpus-id score") or in TREC's form (qid, an ignored
// iteration field, docid, score). Fields are separated by white space, so ids
// cannot contain any; every line must have as many fields as the first;
// blank lines are skipped. A pair judged twice is an error naming both
// lines. name names the input in errors (*RecordError).
func ParseQrels(r io.Reader, name string) ([]Qrel, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	p := newQrelsParser(name)
	var n int64
	for sc.Scan() {
		n++
		if err := p.line(n, sc.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &RecordError{File: name, Where: "line " + strconv.FormatInt(n+1, 10), Err: fmt.Errorf("%v: %w", err, ErrRecord)}
	}
	return p.out, nil
}

// qrelsParser holds the state of one qrels text: the judgements so far, the
// line of every pair, the field count of the first line.
type qrelsParser struct {
	name   string
	out    []Qrel
	seen   map[qrelKey]int64
	fields int
}

func newQrelsParser(name string) *qrelsParser {
	return &qrelsParser{name: name, seen: map[qrelKey]int64{}}
}

// line parses line n.
func (p *qrelsParser) line(n int64, b []byte) error {
	at := func(format string, a ...any) error {
		return &RecordError{File: p.name, Where: "line " + strconv.FormatInt(n, 10), Err: fmt.Errorf(format, a...)}
	}
	f := strings.Fields(string(b))
	switch {
	case len(f) == 0:
		return nil
	case !utf8.Valid(b):
		return at("invalid UTF-8: %w", ErrRecord)
	case len(f) != 3 && len(f) != 4:
		return at("%d fields, want query-id corpus-id score (or TREC's qid 0 docid score): %w", len(f), ErrRecord)
	case p.fields != 0 && len(f) != p.fields:
		return at("%d fields, the lines before have %d: %w", len(f), p.fields, ErrRecord)
	}
	first := p.fields == 0
	p.fields = len(f)
	q, d, lvl := f[0], f[len(f)-2], f[len(f)-1]
	score, err := strconv.Atoi(lvl)
	if err != nil {
		if first && len(f) == 3 {
			return nil // header
		}
		return at("score %q of query %q, document %q is not an integer: %w", lvl, q, d, ErrRecord)
	}
	for _, id := range []string{q, d} {
		if err := CheckID(id); err != nil {
			return at("%w", err)
		}
	}
	k := qrelKey{q, d}
	if prev, dup := p.seen[k]; dup {
		return at("query %q and document %q already judged at line %d: %w", q, d, prev, ErrDuplicateID)
	}
	p.seen[k] = n
	p.out = append(p.out, Qrel{QueryID: q, DocID: d, Score: score})
	return nil
}

// Judgements turns judgement rows into query id -> document id -> score, the
// form eval.Qrels has. A later row of the same pair wins (rows from one file
// never repeat a pair).
func Judgements(rows []Qrel) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, r := range rows {
		if out[r.QueryID] == nil {
			out[r.QueryID] = map[string]int{}
		}
		out[r.QueryID][r.DocID] = r.Score
	}
	return out
}

type qrelKey struct{ q, d string }

// readQrelsParquet appends the judgements of one Parquet file to out; seen
// holds the place of every pair read so far, across files.
func readQrelsParquet(path string, opts Options, out []Qrel, seen map[qrelKey]string) ([]Qrel, error) {
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(opts.Allocator)))
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: not a readable Parquet file: %v: %w", path, err, ErrFormat)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, opts.Allocator)
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: Parquet schema: %v: %w", path, err, ErrFormat)
	}
	sc, err := fr.Schema()
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: Parquet schema: %v: %w", path, err, ErrFormat)
	}
	var cols []int
	for _, name := range []string{"query-id", "corpus-id", "score"} {
		if len(sc.FieldIndices(name)) == 0 {
			return nil, fmt.Errorf("corpus: %s: no column %q: %w", path, name, ErrColumn)
		}
		cols = append(cols, pf.MetaData().Schema.ColumnIndexByName(name))
	}
	rr, err := fr.GetRecordReader(context.Background(), cols, nil)
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: %v: %w", path, err, ErrFormat)
	}
	defer rr.Release()
	var row int64
	for rr.Next() {
		rec := rr.RecordBatch()
		get := func(name string) (valueFunc, error) {
			v, err := stringColumn(rec.Column(rec.Schema().FieldIndices(name)[0]), true)
			if err != nil {
				return nil, fmt.Errorf("corpus: %s: column %q: %v: %w", path, name, err, ErrColumn)
			}
			return v, nil
		}
		qf, err := get("query-id")
		if err != nil {
			return nil, err
		}
		df, err := get("corpus-id")
		if err != nil {
			return nil, err
		}
		sf, err := scoreColumn(rec.Column(rec.Schema().FieldIndices("score")[0]))
		if err != nil {
			return nil, fmt.Errorf("corpus: %s: column \"score\": %v: %w", path, err, ErrColumn)
		}
		for i := range int(rec.NumRows()) {
			at := func(format string, a ...any) error {
				return &RecordError{File: path, Where: "row " + strconv.FormatInt(row, 10), Err: fmt.Errorf(format, a...)}
			}
			q, qok := qf(i)
			d, dok := df(i)
			s, sok := sf(i)
			switch {
			case !qok || !dok || q == "" || d == "":
				return nil, at("null or empty query-id or corpus-id: %w", ErrRecord)
			case !sok:
				return nil, at("score is null or not an integer: %w", ErrRecord)
			}
			for _, id := range []string{q, d} {
				if err := CheckID(id); err != nil {
					return nil, at("%w", err)
				}
			}
			k := qrelKey{strings.Clone(q), strings.Clone(d)}
			if first, dup := seen[k]; dup {
				return nil, at("query %q and document %q already judged at %s: %w", k.q, k.d, first, ErrDuplicateID)
			}
			seen[k] = path + " row " + strconv.FormatInt(row, 10)
			out = append(out, Qrel{QueryID: k.q, DocID: k.d, Score: s})
			row++
		}
	}
	if err := rr.Err(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("corpus: %s after row %d: %v: %w", path, row, err, ErrFormat)
	}
	return out, nil
}

// scoreColumn reads integer scores, or floats that hold integers.
func scoreColumn(col arrow.Array) (func(int) (int, bool), error) {
	switch a := col.(type) {
	case *array.Int64:
		return func(i int) (int, bool) { return int(a.Value(i)), a.IsValid(i) }, nil
	case *array.Int32:
		return func(i int) (int, bool) { return int(a.Value(i)), a.IsValid(i) }, nil
	case *array.Float64:
		return func(i int) (int, bool) {
			v := a.Value(i)
			return int(v), a.IsValid(i) && v == math.Trunc(v)
		}, nil
	}
	return nil, fmt.Errorf("type %s, want an integer", col.DataType())
}
