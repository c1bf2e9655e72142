package corpus

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetSource reads the selected row groups of a Parquet file one at a
// time through a pqarrow record reader, so memory holds one batch of rows
// and the pages behind it, not the file.
type parquetSource struct {
	path    string
	pf      *file.Reader
	fr      *pqarrow.FileReader
	cols    []int   // leaf columns to read
	units   []int   // selected row groups, in order
	rgStart []int64 // first file row of each row group
	ui      int     // next entry of units to open
	rr      pqarrow.RecordReader
	unit    int
	rows    int64 // rows of the current row group returned so far
}

func openParquet(path string, opts Options) (*arrowReader, error) {
	props := parquet.NewReaderProperties(opts.Allocator)
	props.BufferedStreamEnabled = true // read pages as needed, not whole column chunks
	props.BufferSize = 1 << 20
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: not a readable Parquet file: %v: %w", path, err, ErrFormat)
	}
	src := &parquetSource{path: path, pf: pf}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchSize)}, opts.Allocator)
	if err != nil {
		src.close()
		return nil, fmt.Errorf("corpus: %s: Parquet schema: %v: %w", path, err, ErrFormat)
	}
	src.fr = fr
	sc, err := fr.Schema()
	if err != nil {
		src.close()
		return nil, fmt.Errorf("corpus: %s: Parquet schema: %v: %w", path, err, ErrFormat)
	}
	if err := checkSchema(path, sc, opts); err != nil {
		src.close()
		return nil, err
	}
	for _, name := range []string{opts.IDColumn, opts.TitleColumn, opts.TextColumn} {
		if i := pf.MetaData().Schema.ColumnIndexByName(name); i >= 0 {
			src.cols = append(src.cols, i)
		}
	}
	n := pf.NumRowGroups()
	src.rgStart = make([]int64, n)
	var start int64
	for rg := range n {
		src.rgStart[rg] = start
		start += pf.MetaData().RowGroup(rg).NumRows()
		if opts.Shard.has(rg) {
			src.units = append(src.units, rg)
		}
	}
	where := func(p pos) string {
		return fmt.Sprintf("row group %d row %d (row %d)", p.unit, p.row, src.rgStart[p.unit]+p.row)
	}
	return &arrowReader{src: src, b: newBuilder(path, opts, where)}, nil
}

func (s *parquetSource) next(ctx context.Context) (arrow.RecordBatch, int, int64, error) {
	for {
		if s.rr == nil {
			if s.ui >= len(s.units) {
				return nil, 0, 0, io.EOF
			}
			s.unit = s.units[s.ui]
			s.ui++
			rr, err := s.fr.GetRecordReader(ctx, s.cols, []int{s.unit})
			if err != nil {
				return nil, 0, 0, fmt.Errorf("corpus: %s row group %d: %v: %w", s.path, s.unit, err, ErrFormat)
			}
			s.rr, s.rows = rr, 0
		}
		if s.rr.Next() {
			rec := s.rr.RecordBatch()
			rec.Retain()
			row0 := s.rows
			s.rows += rec.NumRows()
			return rec, s.unit, row0, nil
		}
		err := s.rr.Err()
		s.rr.Release()
		s.rr = nil
		if err != nil && err != io.EOF {
			return nil, 0, 0, fmt.Errorf("corpus: %s row group %d after row %d: %v: %w", s.path, s.unit, s.rows, err, ErrFormat)
		}
	}
}

func (s *parquetSource) close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	if s.pf == nil {
		return nil
	}
	err := s.pf.Close()
	s.pf = nil
	return err
}
