package corpus

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetSource reads the selected row groups of one or more Parquet files
// (the shards of a hub dataset, in name order) one at a time through
// pqarrow record readers, so memory holds one batch of rows and the pages
// behind it, not the file. Units are row groups, numbered across files.
type parquetSource struct {
	files []*pqFile
	units []pqUnit // every row group of every file, in order
	sel   []int    // selected entries of units
	ui    int      // next entry of sel to open
	rr    pqarrow.RecordReader
	unit  int
	rows  int64 // rows of the current row group returned so far
}

type pqFile struct {
	path string
	pf   *file.Reader
	fr   *pqarrow.FileReader
	cols []int // leaf columns to read
}

type pqUnit struct {
	file, rg int
	start    int64 // first row of the row group in its file
}

var parquetFormat = format{
	name: FormatParquet, magic: []byte("PAR1"), exts: []string{".parquet"}, notMagic: "a Parquet file (no PAR1 magic)",
	layout: func(dir string) (bool, error) { pq, err := parquetFiles(dir); return len(pq) > 0, err },
	open:   func(path string, _ Format, opts Options) (Reader, error) { return reader(openParquet(path, opts)) },
	units:  parquetUnits,
}

// parquetUnits counts the row groups of a Parquet file (or directory of
// them) from their metadata.
func parquetUnits(path string, opts Options) (int, error) {
	r, err := openParquet(path, opts)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return len(r.src.(*parquetSource).sel), nil
}

// parquetFiles returns the .parquet files directly inside dir, sorted, or
// nil when there are none.
func parquetFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(strings.ToLower(e.Name()), ".parquet") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out, nil
}

func openParquet(path string, opts Options) (*arrowReader, error) {
	paths := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if paths, err = parquetFiles(path); err != nil {
			return nil, err
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("corpus: %s: no .parquet files: %w", path, ErrEmpty)
		}
	}
	src := &parquetSource{}
	for i, p := range paths {
		f, err := openPQFile(p, opts)
		if err != nil {
			src.close()
			return nil, err
		}
		src.files = append(src.files, f)
		var start int64
		for rg := range f.pf.NumRowGroups() {
			src.units = append(src.units, pqUnit{file: i, rg: rg, start: start})
			start += f.pf.MetaData().RowGroup(rg).NumRows()
		}
	}
	for u := range src.units {
		if opts.Shard.has(u) {
			src.sel = append(src.sel, u)
		}
	}
	where := func(p pos) string {
		u := src.units[p.unit]
		w := fmt.Sprintf("row group %d row %d (row %d)", u.rg, p.row, u.start+p.row)
		if len(src.files) > 1 {
			w = "file " + filepath.Base(src.files[u.file].path) + " " + w
		}
		return w
	}
	return &arrowReader{src: src, b: newBuilder(path, opts, where)}, nil
}

func openPQFile(path string, opts Options) (*pqFile, error) {
	props := parquet.NewReaderProperties(opts.Allocator)
	props.BufferedStreamEnabled = true // read pages as needed, not whole column chunks
	props.BufferSize = 1 << 20
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("corpus: %s: not a readable Parquet file: %v: %w", path, err, ErrFormat)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchSize)}, opts.Allocator)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("corpus: %s: Parquet schema: %v: %w", path, err, ErrFormat)
	}
	sc, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("corpus: %s: Parquet schema: %v: %w", path, err, ErrFormat)
	}
	if err := checkSchema(path, sc, opts); err != nil {
		pf.Close()
		return nil, err
	}
	f := &pqFile{path: path, pf: pf, fr: fr}
	for _, name := range []string{opts.IDColumn, opts.TitleColumn, opts.TextColumn} {
		if i := pf.MetaData().Schema.ColumnIndexByName(name); i >= 0 {
			f.cols = append(f.cols, i)
		}
	}
	return f, nil
}

func (s *parquetSource) next(ctx context.Context) (arrow.RecordBatch, int, int64, error) {
	for {
		if s.rr == nil {
			if s.ui >= len(s.sel) {
				return nil, 0, 0, io.EOF
			}
			s.unit = s.sel[s.ui]
			s.ui++
			u := s.units[s.unit]
			f := s.files[u.file]
			rr, err := f.fr.GetRecordReader(ctx, f.cols, []int{u.rg})
			if err != nil {
				return nil, 0, 0, fmt.Errorf("corpus: %s row group %d: %v: %w", f.path, u.rg, err, ErrFormat)
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
			u := s.units[s.unit]
			return nil, 0, 0, fmt.Errorf("corpus: %s row group %d after row %d: %v: %w", s.files[u.file].path, u.rg, s.rows, err, ErrFormat)
		}
	}
}

func (s *parquetSource) close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	var err error
	for _, f := range s.files {
		if cerr := f.pf.Close(); err == nil {
			err = cerr
		}
	}
	s.files = nil
	return err
}
