package corpus

import (
	"fmt"
	"io"
)

// CountUnits returns the number of units of a corpus (see [Options.Shard]):
// row groups of a Parquet file and record batches of an Arrow IPC file,
// read from their metadata; files of a directory; blocks of
// [Options.BlockLines] lines of a JSONL file and record batches of an Arrow
// stream, which have to be read through to be counted. A build split into
// N shards gives each at least one unit when N <= CountUnits.
func CountUnits(path string, opts Options) (int, error) {
	opts.Shard = Shard{}
	opts, err := opts.withDefaults()
	if err != nil {
		return 0, err
	}
	f, err := detect(path, opts.Format)
	if err != nil {
		return 0, err
	}
	switch f {
	case FormatParquet:
		r, err := openParquet(path, opts)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		return len(r.src.(*parquetSource).sel), nil
	case FormatArrowFile:
		r, err := openIPC(path, f, opts)
		if err != nil {
			return 0, err
		}
		defer r.Close()
		return len(r.src.(*ipcFileSource).units), nil
	case FormatArrowStream:
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
	case FormatDir:
		r, err := openDir(path, opts)
		if err != nil {
			return 0, err
		}
		return len(r.files), nil
	case FormatJSONL:
		lr, err := openLines(path)
		if err != nil {
			return 0, err
		}
		defer lr.close()
		for {
			if _, err := lr.next(); err == io.EOF {
				break
			} else if err != nil {
				return 0, err
			}
		}
		return int((lr.line + int64(opts.BlockLines) - 1) / int64(opts.BlockLines)), nil
	}
	return 0, fmt.Errorf("corpus: %s: format %q cannot hold a corpus: %w", path, f, ErrFormat)
}
