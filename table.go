package msrag

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// chunkTable maps each vector of one window's FAISS index (its row number) to the
// chunk it embeds: the document, the token span and the byte span in the
// document's text. It is kept as flat columns in memory.
type chunkTable struct {
	Doc       []int32 // document index (row of docs.parquet)
	TokStart  []int32
	TokEnd    []int32
	ByteStart []int64
	ByteEnd   []int64
}

func (t *chunkTable) len() int { return len(t.Doc) }

func (t *chunkTable) add(doc int32, tokStart, tokEnd int32, byteStart, byteEnd int64) {
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

// parquetRowGroup is the number of rows per row group in the tables we write.
const parquetRowGroup = 1 << 20

func writerProps() *parquet.WriterProperties {
	return parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
}

// writeChunkTable writes t to path as Parquet, through a temporary file.
func writeChunkTable(path string, t *chunkTable) error {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, chunkSchema)
	defer b.Release()
	return writeParquet(path, chunkSchema, t.len(), func(lo, hi int) arrow.RecordBatch {
		b.Field(0).(*array.Int32Builder).AppendValues(t.Doc[lo:hi], nil)
		b.Field(1).(*array.Int32Builder).AppendValues(t.TokStart[lo:hi], nil)
		b.Field(2).(*array.Int32Builder).AppendValues(t.TokEnd[lo:hi], nil)
		b.Field(3).(*array.Int64Builder).AppendValues(t.ByteStart[lo:hi], nil)
		b.Field(4).(*array.Int64Builder).AppendValues(t.ByteEnd[lo:hi], nil)
		return b.NewRecordBatch()
	})
}

// writeDocTable writes the document ids and titles to path as Parquet.
func writeDocTable(path string, ids, titles []string) error {
	mem := memory.DefaultAllocator
	b := array.NewRecordBuilder(mem, docSchema)
	defer b.Release()
	return writeParquet(path, docSchema, len(ids), func(lo, hi int) arrow.RecordBatch {
		b.Field(0).(*array.StringBuilder).AppendValues(ids[lo:hi], nil)
		b.Field(1).(*array.StringBuilder).AppendValues(titles[lo:hi], nil)
		return b.NewRecordBatch()
	})
}

func writeParquet(path string, schema *arrow.Schema, n int, batch func(lo, hi int) arrow.RecordBatch) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	tmp := f.Name()
	if err = f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("msrag: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w, err := pqarrow.NewFileWriter(schema, f, writerProps(), pqarrow.DefaultWriterProps())
	if err != nil {
		return fmt.Errorf("msrag: writing %s: %w", path, err)
	}
	for lo := 0; lo < n || (n == 0 && lo == 0); lo += parquetRowGroup {
		hi := min(lo+parquetRowGroup, n)
		rec := batch(lo, hi)
		err = w.Write(rec)
		rec.Release()
		if err != nil {
			w.Close()
			return fmt.Errorf("msrag: writing %s: %w", path, err)
		}
		if n == 0 {
			break
		}
	}
	if err = w.Close(); err != nil { // closes f too
		return fmt.Errorf("msrag: writing %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	return nil
}

// readColumns reads a whole Parquet file written by writeParquet as one table.
func readTable(path string) (arrow.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, fmt.Errorf("msrag: reading %s: %w", path, err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{Parallel: false, BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("msrag: reading %s: %w", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("msrag: reading %s: %w", path, err)
	}
	return tbl, nil
}

// readChunkTable reads a chunk table written by writeChunkTable.
func readChunkTable(path string) (*chunkTable, error) {
	tbl, err := readTable(path)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	if !sameColumns(tbl.Schema(), chunkSchema) {
		return nil, fmt.Errorf("msrag: %s: unexpected columns %v: %w", path, tbl.Schema(), ErrIndexMismatch)
	}
	n := int(tbl.NumRows())
	t := &chunkTable{
		Doc: make([]int32, 0, n), TokStart: make([]int32, 0, n), TokEnd: make([]int32, 0, n),
		ByteStart: make([]int64, 0, n), ByteEnd: make([]int64, 0, n),
	}
	for _, c := range tbl.Column(0).Data().Chunks() {
		t.Doc = append(t.Doc, c.(*array.Int32).Int32Values()...)
	}
	for _, c := range tbl.Column(1).Data().Chunks() {
		t.TokStart = append(t.TokStart, c.(*array.Int32).Int32Values()...)
	}
	for _, c := range tbl.Column(2).Data().Chunks() {
		t.TokEnd = append(t.TokEnd, c.(*array.Int32).Int32Values()...)
	}
	for _, c := range tbl.Column(3).Data().Chunks() {
		t.ByteStart = append(t.ByteStart, c.(*array.Int64).Int64Values()...)
	}
	for _, c := range tbl.Column(4).Data().Chunks() {
		t.ByteEnd = append(t.ByteEnd, c.(*array.Int64).Int64Values()...)
	}
	return t, nil
}

// readDocTable reads the document ids and titles written by writeDocTable.
func readDocTable(path string) (ids, titles []string, err error) {
	tbl, err := readTable(path)
	if err != nil {
		return nil, nil, err
	}
	defer tbl.Release()
	if !sameColumns(tbl.Schema(), docSchema) {
		return nil, nil, fmt.Errorf("msrag: %s: unexpected columns %v: %w", path, tbl.Schema(), ErrIndexMismatch)
	}
	n := int(tbl.NumRows())
	ids, titles = make([]string, 0, n), make([]string, 0, n)
	for _, c := range tbl.Column(0).Data().Chunks() {
		s := c.(*array.String)
		for i := 0; i < s.Len(); i++ {
			ids = append(ids, strings.Clone(s.Value(i)))
		}
	}
	for _, c := range tbl.Column(1).Data().Chunks() {
		s := c.(*array.String)
		for i := 0; i < s.Len(); i++ {
			titles = append(titles, strings.Clone(s.Value(i)))
		}
	}
	return ids, titles, nil
}

// sameColumns reports whether two schemas have the same column names and types
// (field metadata, which Parquet adds, is ignored).
func sameColumns(a, b *arrow.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || !arrow.TypeEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}
