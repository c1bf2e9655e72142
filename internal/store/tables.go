package store

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/msrag/msrag/internal/parquetio"
)

// ChunkTable maps each vector of one window's FAISS index (its row number) to
// the chunk it embeds: the document, the token span and the byte span in the
// document's text, as flat columns.
type ChunkTable struct {
	Doc       []int32 // document index (row of docs.parquet)
	TokStart  []int32
	TokEnd    []int32
	ByteStart []int64
	ByteEnd   []int64
}

// Len returns the number of rows.
func (t *ChunkTable) Len() int { return len(t.Doc) }

// Add appends a row.
func (t *ChunkTable) Add(doc, tokStart, tokEnd int32, byteStart, byteEnd int64) {
	t.Doc = append(t.Doc, doc)
	t.TokStart = append(t.TokStart, tokStart)
	t.TokEnd = append(t.TokEnd, tokEnd)
	t.ByteStart = append(t.ByteStart, byteStart)
	t.ByteEnd = append(t.ByteEnd, byteEnd)
}

var chunkSchema = arrow.NewSchema([]arrow.Field{
	{Name: "doc_idx", Type: arrow.PrimitiveTypes.Int32},
	{Name: "token_start", Type: arrow.PrimitiveTypes.Int32},
	{Name: "token_end", Type: arrow.PrimitiveTypes.Int32},
	{Name: "byte_start", Type: arrow.PrimitiveTypes.Int64},
	{Name: "byte_end", Type: arrow.PrimitiveTypes.Int64},
}, nil)

var docSchema = arrow.NewSchema([]arrow.Field{
	{Name: "doc_id", Type: arrow.BinaryTypes.String},
	{Name: "title", Type: arrow.BinaryTypes.String},
}, nil)

// WriteChunkTable writes t to w as Parquet.
func WriteChunkTable(w io.Writer, t *ChunkTable) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, chunkSchema)
	defer b.Release()
	return parquetio.WriteTable(w, chunkSchema, t.Len(), func(lo, hi int) arrow.RecordBatch {
		b.Field(0).(*array.Int32Builder).AppendValues(t.Doc[lo:hi], nil)
		b.Field(1).(*array.Int32Builder).AppendValues(t.TokStart[lo:hi], nil)
		b.Field(2).(*array.Int32Builder).AppendValues(t.TokEnd[lo:hi], nil)
		b.Field(3).(*array.Int64Builder).AppendValues(t.ByteStart[lo:hi], nil)
		b.Field(4).(*array.Int64Builder).AppendValues(t.ByteEnd[lo:hi], nil)
		return b.NewRecordBatch()
	})
}

// WriteDocTable writes the document ids and titles to w as Parquet.
func WriteDocTable(w io.Writer, ids, titles []string) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, docSchema)
	defer b.Release()
	return parquetio.WriteTable(w, docSchema, len(ids), func(lo, hi int) arrow.RecordBatch {
		b.Field(0).(*array.StringBuilder).AppendValues(ids[lo:hi], nil)
		b.Field(1).(*array.StringBuilder).AppendValues(titles[lo:hi], nil)
		return b.NewRecordBatch()
	})
}

// readTable parses a whole table of the given schema.
func readTable(data []byte, want *arrow.Schema) (arrow.Table, error) {
	tbl, err := parquetio.ReadTable(data)
	if err != nil {
		return nil, err
	}
	if err := parquetio.CheckColumns(tbl.Schema(), want); err != nil {
		tbl.Release()
		return nil, fmt.Errorf("%w: %w", err, ErrMismatch)
	}
	return tbl, nil
}

// ReadChunkTable parses a chunk table written by WriteChunkTable.
func ReadChunkTable(data []byte) (*ChunkTable, error) {
	tbl, err := readTable(data, chunkSchema)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	t := &ChunkTable{
		Doc: make([]int32, 0, n), TokStart: make([]int32, 0, n), TokEnd: make([]int32, 0, n),
		ByteStart: make([]int64, 0, n), ByteEnd: make([]int64, 0, n),
	}
	t.Doc = appendInt32(t.Doc, tbl.Column(0))
	t.TokStart = appendInt32(t.TokStart, tbl.Column(1))
	t.TokEnd = appendInt32(t.TokEnd, tbl.Column(2))
	t.ByteStart = appendInt64(t.ByteStart, tbl.Column(3))
	t.ByteEnd = appendInt64(t.ByteEnd, tbl.Column(4))
	return t, nil
}

func appendInt32(dst []int32, col *arrow.Column) []int32 {
	for _, c := range col.Data().Chunks() {
		dst = append(dst, c.(*array.Int32).Int32Values()...)
	}
	return dst
}

func appendInt64(dst []int64, col *arrow.Column) []int64 {
	for _, c := range col.Data().Chunks() {
		dst = append(dst, c.(*array.Int64).Int64Values()...)
	}
	return dst
}

// ReadDocTable parses the document ids and titles written by WriteDocTable.
func ReadDocTable(data []byte) (ids, titles []string, err error) {
	tbl, err := readTable(data, docSchema)
	if err != nil {
		return nil, nil, err
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	return appendStrings(make([]string, 0, n), tbl.Column(0)), appendStrings(make([]string, 0, n), tbl.Column(1)), nil
}

func appendStrings(dst []string, col *arrow.Column) []string {
	for _, c := range col.Data().Chunks() {
		s := c.(*array.String)
		for i := range s.Len() {
			dst = append(dst, strings.Clone(s.Value(i)))
		}
	}
	return dst
}
