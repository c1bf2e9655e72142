package main

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

var runSchema = arrow.NewSchema([]arrow.Field{
	{Name: "query_id", Type: arrow.BinaryTypes.String},
	{Name: "doc_id", Type: arrow.BinaryTypes.String},
	{Name: "rank", Type: arrow.PrimitiveTypes.Int32},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64},
	{Name: "evidence", Type: arrow.BinaryTypes.String},
}, nil)

// parquetRun collects search results and writes them as one Parquet file.
type parquetRun struct {
	b *array.RecordBuilder
}

func newParquetRun() *parquetRun {
	return &parquetRun{b: array.NewRecordBuilder(memory.DefaultAllocator, runSchema)}
}

func (p *parquetRun) add(qid, docID string, rank int, score float64, evidence string) {
	p.b.Field(0).(*array.StringBuilder).Append(qid)
	p.b.Field(1).(*array.StringBuilder).Append(docID)
	p.b.Field(2).(*array.Int32Builder).Append(int32(rank))
	p.b.Field(3).(*array.Float64Builder).Append(score)
	p.b.Field(4).(*array.StringBuilder).Append(evidence)
}

func (p *parquetRun) writeTo(w io.Writer) error {
	defer p.b.Release()
	rec := p.b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	fw, err := pqarrow.NewFileWriter(runSchema, w, props, pqarrow.DefaultWriterProps())
	if err != nil {
		return fmt.Errorf("search: parquet writer: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("search: writing parquet: %w", err)
	}
	return fw.Close()
}
