package corpus_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/msrag/msrag/corpus"
)

// row is one input record; a nil pointer is a null value.
type row struct {
	id, title, text *string
}

func s(v string) *string { return &v }

func rows(docs ...corpus.Doc) []row {
	out := make([]row, len(docs))
	for i, d := range docs {
		out[i] = row{s(d.ID), s(d.Title), s(d.Text)}
	}
	return out
}

// table describes the columns written by the test writers: names and types.
type table struct {
	names [3]string         // id, title, text column names; "" omits the column
	types [3]arrow.DataType // nil means string
}

var beir = table{names: [3]string{"_id", "title", "text"}}

func (tb table) schema() *arrow.Schema {
	var fields []arrow.Field
	for k, n := range tb.names {
		if n == "" {
			continue
		}
		t := tb.types[k]
		if t == nil {
			t = arrow.BinaryTypes.String
		}
		fields = append(fields, arrow.Field{Name: n, Type: t, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// record builds one Arrow record of rs with the columns of tab.
func (tab table) record(t testing.TB, mem memory.Allocator, rs []row) arrow.RecordBatch {
	t.Helper()
	sc := tab.schema()
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	col := 0
	for k, n := range tab.names {
		if n == "" {
			continue
		}
		fb := b.Field(col)
		col++
		for _, r := range rs {
			v := [3]*string{r.id, r.title, r.text}[k]
			switch fb := fb.(type) {
			case *array.StringBuilder:
				if v == nil {
					fb.AppendNull()
				} else {
					fb.Append(*v)
				}
			case *array.Int64Builder:
				fb.Append(int64(len(*v)))
			case *array.Float64Builder:
				fb.Append(float64(len(*v)))
			default:
				t.Fatalf("no test writer for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// writeParquet writes rs to a Parquet file with row groups of rgRows rows.
func writeParquet(t testing.TB, path string, tab table, rgRows int64, rs []row) {
	t.Helper()
	mem := memory.NewGoAllocator()
	rec := tab.record(t, mem, rs)
	defer rec.Release()
	f, err := create(t, path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(rec.Schema(), f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rgRows)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeIPC writes rs as an Arrow IPC file or stream, batchRows rows per
// record batch.
func writeIPC(t testing.TB, path string, stream bool, tab table, batchRows int, rs []row) {
	t.Helper()
	mem := memory.NewGoAllocator()
	f, err := create(t, path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type writer interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	var w writer
	if stream {
		w = ipc.NewWriter(f, ipc.WithSchema(tab.schema()), ipc.WithAllocator(mem))
	} else {
		fw, err := ipc.NewFileWriter(f, ipc.WithSchema(tab.schema()), ipc.WithAllocator(mem))
		if err != nil {
			t.Fatal(err)
		}
		w = fw
	}
	for i := 0; i < len(rs); i += batchRows {
		rec := tab.record(t, mem, rs[i:min(i+batchRows, len(rs))])
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeJSONL writes rs as JSON lines, gzip-compressed when path ends in .gz.
func writeJSONL(t testing.TB, path string, rs []row) {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range rs {
		buf.WriteByte('{')
		sep := ""
		for k, v := range [3]*string{r.id, r.title, r.text} {
			if v == nil && k != 2 {
				continue
			}
			fmt.Fprintf(&buf, `%s"%s":`, sep, [3]string{"_id", "title", "text"}[k])
			sep = ","
			if v == nil {
				buf.WriteString("null")
			} else {
				rawJSONString(&buf, *v)
			}
		}
		buf.WriteString("}\n")
	}
	writeFile(t, path, buf.Bytes())
}

// rawJSONString writes v as a JSON string, passing bytes >= 0x80 through
// unchanged (so invalid UTF-8 reaches the reader, unlike encoding/json).
func rawJSONString(buf *bytes.Buffer, v string) {
	buf.WriteByte('"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"' || c == '\\':
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(buf, `\u%04x`, c)
		default:
			buf.WriteByte(c)
		}
	}
	buf.WriteByte('"')
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if filepath.Ext(path) == ".gz" {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		data = z.Bytes()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// readAll reads every batch of a corpus. It fails the test on an error
// unless the caller wants it back.
func readAll(t testing.TB, path string, opts corpus.Options) ([]corpus.Doc, corpus.Stats, error) {
	t.Helper()
	r, err := corpus.Open(path, opts)
	if err != nil {
		return nil, corpus.Stats{}, err
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	var docs []corpus.Doc
	for {
		batch, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return docs, r.Stats(), nil
		}
		if err != nil {
			return docs, r.Stats(), err
		}
		if len(batch) == 0 || (opts.BatchSize > 0 && len(batch) > opts.BatchSize) {
			t.Fatalf("batch of %d documents (batch size %d)", len(batch), opts.BatchSize)
		}
		docs = append(docs, batch...)
	}
}

func gzipBytes(t testing.TB, data []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// writeQrelsParquet writes qrels with string ids and integer scores, or,
// with numeric set, integer ids (parsed from the strings) and float scores.
func writeQrelsParquet(t testing.TB, path string, qs []corpus.Qrel, numeric bool) {
	t.Helper()
	mem := memory.NewGoAllocator()
	idType, scoreType := arrow.DataType(arrow.BinaryTypes.String), arrow.DataType(arrow.PrimitiveTypes.Int64)
	if numeric {
		idType, scoreType = arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	}
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "query-id", Type: idType},
		{Name: "corpus-id", Type: idType},
		{Name: "score", Type: scoreType},
	}, nil)
	b := array.NewRecordBuilder(mem, sc)
	defer b.Release()
	for _, q := range qs {
		for k, id := range []string{q.QueryID, q.DocID} {
			switch fb := b.Field(k).(type) {
			case *array.StringBuilder:
				fb.Append(id)
			case *array.Int64Builder:
				n, err := strconv.ParseInt(id, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				fb.Append(n)
			}
		}
		switch fb := b.Field(2).(type) {
		case *array.Int64Builder:
			fb.Append(int64(q.Score))
		case *array.Float64Builder:
			fb.Append(float64(q.Score))
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	f, err := create(t, path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// create creates path and its parent directories.
func create(t testing.TB, path string) (*os.File, error) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}
