package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
)

// Input is a file a Reader has read whole: its path (as given to Open, or
// joined to the directory given), its size, and the sha256 of its bytes,
// computed as they were read (no second pass over the file).
type Input struct {
	Path   string
	Size   int64
	SHA256 string
	// Shared is set for a file that every shard of a sharded read (see
	// [Options.Shard]) reads whole, keeping its units: a JSONL file. The
	// files of a directory are each one shard's own.
	Shared bool
}

// Inputs returns the files r has read whole so far, for the readers that
// record them: JSONL files (gzip-compressed or not) and directories of
// .txt/.md files (the files of its shard). It returns nil for other readers
// (Parquet and Arrow files are read at random, not in one pass) and before
// a JSONL file is read to its end.
func Inputs(r Reader) []Input {
	if ir, ok := r.(interface{ inputs() []Input }); ok {
		return ir.inputs()
	}
	return nil
}

// hashingFile is a file whose reads are hashed and counted as they go.
type hashingFile struct {
	f   *os.File
	h   hash.Hash
	n   int64
	eof bool
}

func newHashingFile(f *os.File) *hashingFile { return &hashingFile{f: f, h: sha256.New()} }

func (hf *hashingFile) Read(p []byte) (int, error) {
	n, err := hf.f.Read(p)
	hf.h.Write(p[:n])
	hf.n += int64(n)
	if err == io.EOF {
		hf.eof = true
	}
	return n, err
}

// input describes the file once it has been read to its end.
func (hf *hashingFile) input(path string) (Input, bool) {
	if hf == nil || !hf.eof {
		return Input{}, false
	}
	return Input{Path: path, Size: hf.n, SHA256: hex.EncodeToString(hf.h.Sum(nil))}, true
}

// inputOf describes data read whole from path.
func inputOf(path string, data []byte) Input {
	sum := sha256.Sum256(data)
	return Input{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}
