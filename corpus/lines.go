package corpus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
)

// lineReader reads lines of any length from a file that may be
// gzip-compressed. Unlike bufio.Scanner it has no line limit: a line longer
// than its buffer is assembled in a side buffer as large as that line, which
// is dropped again once a long line has been handed out.
type lineReader struct {
	path string
	f    *os.File
	hf   *hashingFile // f's bytes, hashed as they are read
	gz   *gzip.Reader
	br   *bufio.Reader
	long []byte
	max  int   // the longest line read (bytes, without its end)
	line int64 // 1-based number of the last line returned
	size int64 // the file's size when opened
}

const (
	lineBufSize = 1 << 20
	keepLong    = 8 << 20 // side buffers larger than this are not kept
)

// maxLineBytes bounds one line of a line-based file (a queries or qrels
// file, and the most Options.MaxDocBytes may be): a file without line
// breaks (a gzip bomb of zeros) would otherwise be read into memory whole.
var maxLineBytes = 256 << 20

// openLines opens the line-based file path, whose lines may hold at most
// max bytes (0: maxLineBytes).
func openLines(path string, max int) (*lineReader, error) {
	if max <= 0 || max > maxLineBytes {
		max = maxLineBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	lr := &lineReader{path: path, f: f, hf: newHashingFile(f), max: max}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		lr.size = st.Size()
	}
	br := bufio.NewReaderSize(lr.hf, lineBufSize)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == magicGzip[0] && head[1] == magicGzip[1] {
		gz, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("corpus: %s: bad gzip header: %v: %w", path, err, ErrFormat)
		}
		lr.gz = gz
		br = bufio.NewReaderSize(gz, lineBufSize)
	}
	lr.br = br
	return lr, nil
}

// next returns the next line without its "\n" (or "\r\n"), valid until the
// next call, or io.EOF. A last line without "\n" is returned too.
func (lr *lineReader) next() ([]byte, error) {
	lr.long = lr.long[:0]
	if cap(lr.long) > keepLong {
		lr.long = nil // the last line was of megabytes: not kept for the next ones
	}
	for {
		frag, err := lr.br.ReadSlice('\n')
		switch {
		case err == nil || err == io.EOF:
			line := frag
			if len(lr.long) > 0 || err == io.EOF {
				lr.long = append(lr.long, frag...)
				line = lr.long
			}
			if err == io.EOF && len(line) == 0 {
				return nil, io.EOF
			}
			if line = trimEOL(line); len(line) > lr.max {
				return nil, lr.tooLong()
			}
			lr.line++
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(lr.long)+len(frag) > lr.max+2 { // +2: its end, "\r\n", may follow
				return nil, lr.tooLong()
			}
			lr.long = append(lr.long, frag...)
			continue
		}
		return nil, fmt.Errorf("corpus: %s after line %d: %v: %w", lr.path, lr.line, err, ErrFormat)
	}
}

// tooLong is the error of the line after the last one returned, longer than
// lr.max: read no further than the limit.
func (lr *lineReader) tooLong() error {
	if lr.max < maxLineBytes {
		return fmt.Errorf("corpus: %s line %d: more than %d bytes, the most a document's line may hold (Options.MaxDocBytes, msrag's --max-doc-bytes): "+
			"its tokens, windows and terms would take some 25 times that in memory; split the document, or raise the limit: %w", lr.path, lr.line+1, lr.max, ErrRecord)
	}
	return fmt.Errorf("corpus: %s line %d: longer than %d bytes without a line break: %w", lr.path, lr.line+1, lr.max, ErrRecord)
}

// read returns the bytes of the file read so far, as stored, and its size
// (0 when it is not a regular file).
func (lr *lineReader) read() (done, size int64) {
	return lr.hf.n, lr.size
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

func (lr *lineReader) close() error {
	if lr.f == nil {
		return nil
	}
	// gzip.Reader.Close only repeats a decompression error, already
	// reported by next.
	err := lr.f.Close()
	lr.f, lr.gz, lr.long = nil, nil, nil
	return err
}
