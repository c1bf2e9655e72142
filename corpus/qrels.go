package corpus

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

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

// ReadQrels reads relevance judgements from a TSV file (query-id, corpus-id,
// score; a header line is optional and recognised by a score that is not an
// integer; TREC's four-column "qid 0 docid score" is accepted too) or from a
// Parquet file with columns "query-id", "corpus-id" and "score". The pairs
// come back in file order; a pair given twice is an error.
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
		paths := []string{path}
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			if paths, err = parquetFiles(path); err != nil {
				return nil, err
			}
		}
		seen := map[qrelKey]string{}
		for _, p := range paths {
			if out, err = readQrelsParquet(p, opts, out, seen); err != nil {
				return nil, err
			}
		}
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

type qrelKey struct{ q, d string }

func readQrelsTSV(path string) ([]Qrel, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	defer lr.close()
	var out []Qrel
	seen := map[qrelKey]int64{}
	for {
		line, err := lr.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		at := func(format string, a ...any) error {
			return &RecordError{File: path, Where: "line " + strconv.FormatInt(lr.line, 10), Err: fmt.Errorf(format, a...)}
		}
		s := string(line)
		if strings.TrimSpace(s) == "" {
			return nil, at("empty line: %w", ErrRecord)
		}
		fields := strings.Fields(s)
		switch len(fields) {
		case 3:
		case 4:
			fields = []string{fields[0], fields[2], fields[3]}
		default:
			return nil, at("%d fields, want query-id, corpus-id and score: %w", len(fields), ErrRecord)
		}
		score, err := strconv.Atoi(fields[2])
		if err != nil {
			if lr.line == 1 {
				continue // header
			}
			return nil, at("score %q is not an integer: %w", fields[2], ErrRecord)
		}
		k := qrelKey{fields[0], fields[1]}
		if first, dup := seen[k]; dup {
			return nil, at("query %q and document %q already judged at line %d: %w", k.q, k.d, first, ErrDuplicateID)
		}
		seen[k] = lr.line
		out = append(out, Qrel{QueryID: k.q, DocID: k.d, Score: score})
	}
}

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
