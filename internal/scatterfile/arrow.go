package scatterfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/msrag/msrag/internal/safefile"
)

// Row is one ranked row of a channel for a query, as a lists file holds it.
type Row struct {
	Query   int32 // the query's place in the query set
	Channel int32 // the channel's place in the index's layout
	Rank    int32 // from 0, in the canonical order
	Row     int32 // the row in the shard's channel
	Doc     string
	Score   float32
	Start   int64
	End     int64
	Terms   []string // what explains the row (nil: nothing)
}

var listSchema = arrow.NewSchema([]arrow.Field{
	{Name: "query", Type: arrow.PrimitiveTypes.Int32},
	{Name: "channel", Type: arrow.PrimitiveTypes.Int32},
	{Name: "rank", Type: arrow.PrimitiveTypes.Int32},
	{Name: "row", Type: arrow.PrimitiveTypes.Int32},
	{Name: "doc_id", Type: arrow.BinaryTypes.String},
	{Name: "score", Type: arrow.PrimitiveTypes.Float32},
	{Name: "start", Type: arrow.PrimitiveTypes.Int64},
	{Name: "end", Type: arrow.PrimitiveTypes.Int64},
	{Name: "terms", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
}, nil)

// Writer writes one data file of record batches, atomically: nothing is at
// its path until Commit.
type Writer struct {
	f      *safefile.File
	w      *ipc.Writer
	schema *arrow.Schema
	b      *array.RecordBuilder
}

func create(path string, schema *arrow.Schema) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("scatterfile: %w", err)
	}
	f, err := safefile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("scatterfile: %w", err)
	}
	return &Writer{f: f, w: ipc.NewWriter(f, ipc.WithSchema(schema)), schema: schema,
		b: array.NewRecordBuilder(memory.DefaultAllocator, schema)}, nil
}

// CreateLists starts the lists file at path.
func CreateLists(path string) (*Writer, error) { return create(path, listSchema) }

// Lists writes one block's rows as a record batch.
func (w *Writer) Lists(rows []Row) error {
	b := w.b
	for _, r := range rows {
		b.Field(0).(*array.Int32Builder).Append(r.Query)
		b.Field(1).(*array.Int32Builder).Append(r.Channel)
		b.Field(2).(*array.Int32Builder).Append(r.Rank)
		b.Field(3).(*array.Int32Builder).Append(r.Row)
		b.Field(4).(*array.StringBuilder).Append(r.Doc)
		b.Field(5).(*array.Float32Builder).Append(r.Score)
		b.Field(6).(*array.Int64Builder).Append(r.Start)
		b.Field(7).(*array.Int64Builder).Append(r.End)
		tb := b.Field(8).(*array.ListBuilder)
		if r.Terms == nil {
			tb.AppendNull()
			continue
		}
		tb.Append(true)
		for _, t := range r.Terms {
			tb.ValueBuilder().(*array.StringBuilder).Append(t)
		}
	}
	return w.flush()
}

func (w *Writer) flush() error {
	rec := w.b.NewRecordBatch()
	defer rec.Release()
	if err := w.w.Write(rec); err != nil {
		return fmt.Errorf("scatterfile: %s: %w", w.f.Path(), err)
	}
	return nil
}

// Commit ends the file and puts it in place; it returns its size and
// sha256.
func (w *Writer) Commit() (int64, string, error) {
	defer w.b.Release()
	if err := w.w.Close(); err != nil {
		w.f.Abort()
		return 0, "", fmt.Errorf("scatterfile: %s: %w", w.f.Path(), err)
	}
	if err := w.f.Commit(); err != nil {
		return 0, "", fmt.Errorf("scatterfile: %w", err)
	}
	return w.f.Size(), w.f.Sum(), nil
}

// Abort leaves nothing behind.
func (w *Writer) Abort() {
	w.b.Release()
	w.f.Abort()
}

// Reader reads a data file's record batches in order.
type Reader struct {
	f    *os.File
	r    *ipc.Reader
	path string
}

func open(path string, schema *arrow.Schema) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scatterfile: %w", err)
	}
	r, err := ipc.NewReader(f, ipc.WithSchema(schema))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("scatterfile: %s: %v: %w", path, err, ErrBad)
	}
	return &Reader{f: f, r: r, path: path}, nil
}

// OpenLists opens a lists file.
func OpenLists(path string) (*Reader, error) { return open(path, listSchema) }

// next returns the next record batch, io.EOF after the last.
func (r *Reader) next() (arrow.RecordBatch, error) {
	if !r.r.Next() {
		if err := r.r.Err(); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("scatterfile: %s: %v: %w", r.path, err, ErrBad)
		}
		return nil, io.EOF
	}
	return r.r.RecordBatch(), nil
}

// Lists returns the rows of the next block; io.EOF after the last.
func (r *Reader) Lists() ([]Row, error) {
	rec, err := r.next()
	if err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	q := rec.Column(0).(*array.Int32)
	ch := rec.Column(1).(*array.Int32)
	rk := rec.Column(2).(*array.Int32)
	row := rec.Column(3).(*array.Int32)
	doc := rec.Column(4).(*array.String)
	sc := rec.Column(5).(*array.Float32)
	st := rec.Column(6).(*array.Int64)
	en := rec.Column(7).(*array.Int64)
	terms := rec.Column(8).(*array.List)
	tv := terms.ListValues().(*array.String)
	out := make([]Row, n)
	for i := range n {
		out[i] = Row{Query: q.Value(i), Channel: ch.Value(i), Rank: rk.Value(i), Row: row.Value(i), Doc: doc.Value(i),
			Score: sc.Value(i), Start: st.Value(i), End: en.Value(i)}
		if terms.IsNull(i) {
			continue
		}
		lo, hi := terms.ValueOffsets(i)
		out[i].Terms = make([]string, 0, hi-lo)
		for j := lo; j < hi; j++ {
			out[i].Terms = append(out[i].Terms, tv.Value(int(j)))
		}
	}
	return out, nil
}

// Close closes the file.
func (r *Reader) Close() error {
	r.r.Release()
	return r.f.Close()
}

// vectorSchema is a queries file's: each query's id and vector.
func vectorSchema(dims int) *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "vector", Type: arrow.FixedSizeListOf(int32(dims), arrow.PrimitiveTypes.Float32)},
	}, nil)
}

// CreateVectors starts the queries file at path, of vectors of dims.
func CreateVectors(path string, dims int) (*Writer, error) { return create(path, vectorSchema(dims)) }

// Vectors writes queries' ids and vectors (len(ids) rows of the file's
// dims) as one record batch.
func (w *Writer) Vectors(ids []string, vecs []float32) error {
	w.b.Field(0).(*array.StringBuilder).AppendValues(ids, nil)
	lb := w.b.Field(1).(*array.FixedSizeListBuilder)
	for range ids {
		lb.Append(true)
	}
	lb.ValueBuilder().(*array.Float32Builder).AppendValues(vecs, nil)
	return w.flush()
}

// OpenVectors opens a queries file of vectors of dims.
func OpenVectors(path string, dims int) (*Reader, error) { return open(path, vectorSchema(dims)) }

// Vectors returns the ids and vectors of the next record batch; io.EOF
// after the last.
func (r *Reader) Vectors() ([]string, []float32, error) {
	rec, err := r.next()
	if err != nil {
		return nil, nil, err
	}
	n := int(rec.NumRows())
	idc := rec.Column(0).(*array.String)
	ids := make([]string, n)
	for i := range n {
		ids[i] = idc.Value(i)
	}
	vals := rec.Column(1).(*array.FixedSizeList).ListValues().(*array.Float32).Float32Values()
	return ids, append([]float32(nil), vals...), nil
}
