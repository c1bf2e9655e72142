// Package parquetio holds the one way msrag writes Parquet files (Zstandard
// compression, the Arrow schema stored for readers) and reads its own back.
package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// RowGroup is the most rows [WriteTable] puts in one row group.
const RowGroup = 1 << 20

// NewWriter starts a Parquet file of schema on w. The caller writes record
// batches (each becomes one or more row groups) and closes it; Close does not
// close w.
func NewWriter(w io.Writer, schema *arrow.Schema) (*pqarrow.FileWriter, error) {
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	return pqarrow.NewFileWriter(schema, nopCloser{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

// nopCloser keeps pqarrow's Close from closing the caller's writer.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// WriteTable writes n rows as a Parquet file of schema on w, in row groups of
// at most RowGroup rows; batch(lo, hi) builds the record batch of rows
// [lo, hi), which WriteTable releases. n = 0 writes one empty batch, so the
// file still has the schema.
func WriteTable(w io.Writer, schema *arrow.Schema, n int, batch func(lo, hi int) arrow.RecordBatch) error {
	fw, err := NewWriter(w, schema)
	if err != nil {
		return err
	}
	for lo := 0; lo == 0 || lo < n; lo += RowGroup {
		rec := batch(lo, min(lo+RowGroup, n))
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			fw.Close()
			return err
		}
	}
	return fw.Close()
}

// ReadTable reads a whole Parquet file held in data as one table; the caller
// releases it.
func ReadTable(data []byte) (arrow.Table, error) {
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	return fr.ReadTable(context.Background())
}

// SameColumns reports whether two schemas have the same column names and
// types (field metadata, which Parquet adds, is ignored).
func SameColumns(a, b *arrow.Schema) bool {
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

// CheckColumns returns an error naming the columns found when schema does
// not have want's.
func CheckColumns(schema, want *arrow.Schema) error {
	if !SameColumns(schema, want) {
		return fmt.Errorf("unexpected columns %v, want %v", schema, want)
	}
	return nil
}
