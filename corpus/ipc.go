package corpus

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// ipcFileSource reads the selected record batches of an Arrow IPC file,
// which has random access, one batch at a time.
type ipcFileSource struct {
	f     *os.File
	fr    *ipc.FileReader
	units []int
	ui    int
}

// ipcStreamSource reads an Arrow IPC stream in order, skipping the batches
// of other shards.
type ipcStreamSource struct {
	f     *os.File
	sr    *ipc.Reader
	shard Shard
	unit  int
}

var (
	arrowFileFormat = format{
		name: FormatArrowFile, magic: []byte("ARROW1"), exts: []string{".arrow", ".feather", ".ipc"},
		notMagic: "an Arrow IPC file or stream (no magic)",
		open:     func(path string, f Format, opts Options) (Reader, error) { return reader(openIPC(path, f, opts)) },
		units:    arrowFileUnits,
	}
	arrowStreamFormat = format{
		name: FormatArrowStream, magic: []byte{0xff, 0xff, 0xff, 0xff}, exts: []string{".arrows"},
		notMagic: "an Arrow IPC file or stream (no magic)",
		open:     func(path string, f Format, opts Options) (Reader, error) { return reader(openIPC(path, f, opts)) },
		units:    arrowStreamUnits,
	}
)

// arrowFileUnits counts the record batches of an Arrow IPC file from its
// footer.
func arrowFileUnits(path string, opts Options) (int, error) {
	f := FormatArrowFile
	r, err := openIPC(path, f, opts)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return len(r.src.(*ipcFileSource).units), nil
}

// arrowStreamUnits counts the record batches of an Arrow IPC stream, reading
// it through.
func arrowStreamUnits(path string, opts Options) (int, error) {
	f := FormatArrowStream
	r, err := openIPC(path, f, opts)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	s := r.src.(*ipcStreamSource)
	for s.sr.Next() {
		s.unit++
	}
	if err := s.sr.Err(); err != nil && err != io.EOF {
		return 0, fmt.Errorf("corpus: %s after batch %d: %v: %w", path, s.unit, err, ErrFormat)
	}
	return s.unit, nil
}

func openIPC(path string, format Format, opts Options) (*arrowReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	var (
		src recSource
		sc  *arrow.Schema
	)
	if format == FormatArrowFile {
		fr, err := ipc.NewFileReader(f, ipc.WithAllocator(opts.Allocator))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("corpus: %s: not a readable Arrow IPC file: %v: %w", path, err, ErrFormat)
		}
		s := &ipcFileSource{f: f, fr: fr}
		for u := range fr.NumRecords() {
			if opts.Shard.has(u) {
				s.units = append(s.units, u)
			}
		}
		src, sc = s, fr.Schema()
	} else {
		sr, err := ipc.NewReader(f, ipc.WithAllocator(opts.Allocator))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("corpus: %s: not a readable Arrow IPC stream: %v: %w", path, err, ErrFormat)
		}
		src, sc = &ipcStreamSource{f: f, sr: sr, shard: opts.Shard}, sr.Schema()
	}
	if err := checkSchema(path, sc, opts); err != nil {
		src.close()
		return nil, err
	}
	where := func(p pos) string { return "batch " + strconv.Itoa(p.unit) + " row " + strconv.FormatInt(p.row, 10) }
	return &arrowReader{src: src, b: newBuilder(path, opts, where)}, nil
}

func (s *ipcFileSource) next(ctx context.Context) (arrow.RecordBatch, int, int64, error) {
	if s.ui >= len(s.units) {
		return nil, 0, 0, io.EOF
	}
	u := s.units[s.ui]
	s.ui++
	rec, err := s.fr.RecordBatchAt(u)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("corpus: %s batch %d: %v: %w", s.f.Name(), u, err, ErrFormat)
	}
	return rec, u, 0, nil
}

func (s *ipcFileSource) close() error {
	if s.fr == nil {
		return nil
	}
	err := s.fr.Close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.fr = nil
	return err
}

func (s *ipcStreamSource) next(ctx context.Context) (arrow.RecordBatch, int, int64, error) {
	for s.sr.Next() {
		u := s.unit
		s.unit++
		if !s.shard.has(u) {
			continue
		}
		rec := s.sr.RecordBatch()
		rec.Retain()
		return rec, u, 0, nil
	}
	if err := s.sr.Err(); err != nil && err != io.EOF {
		return nil, 0, 0, fmt.Errorf("corpus: %s after batch %d: %v: %w", s.f.Name(), s.unit, err, ErrFormat)
	}
	return nil, 0, 0, io.EOF
}

func (s *ipcStreamSource) close() error {
	if s.sr == nil {
		return nil
	}
	s.sr.Release()
	s.sr = nil
	return s.f.Close()
}
