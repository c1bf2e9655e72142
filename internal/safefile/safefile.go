// Package safefile writes files and directories so that a reader never sees
// them half-written, and hashes what it writes as it writes it.
//
//   - [Create] opens a temporary sibling of the destination; [File.Commit]
//     flushes it, syncs it, renames it into place and syncs the directory;
//     [File.Abort] removes it. [File.Sum] is the sha256 of what was written.
//   - [Write] and [WriteFile] do the same for content produced at once.
//   - [ReplaceDir] moves a complete directory into place in one atomic
//     exchange (renameat2 RENAME_EXCHANGE), or where the file system refuses
//     it in two renames through an aside name ([AsideName]) that [Restore]
//     puts back after a crash between them; a [Replacer] does the same with
//     hooks between the steps.
//   - [SHA256] hashes a file on disk, the one place that does.
//
// Errors name the file and what failed, without a package prefix: callers
// put their own in front.
package safefile

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// A temporary file is named ".NAME.tmp-RANDOM" beside its destination NAME.
const tempSuffix = ".tmp-"

// File is a file being written to a temporary sibling of its destination.
// It is not safe for concurrent use.
type File struct {
	path    string // as the caller named it
	dest    string // where Commit renames the temporary file (see CreateOutput)
	f       *os.File
	bw      *bufio.Writer
	h       hash.Hash
	n       int64
	sum     string
	done    bool
	patched bool // written with WriteAt: the hash is not the content's
	// inPlace: f is the output itself (CreateOutput of a device, a FIFO,
	// a socket, a descriptor), written as it is, never renamed.
	inPlace bool
}

// Create starts writing the file path: the bytes go to a temporary file in
// the same directory until Commit. The caller must call Commit or Abort.
// The temporary file is flock'd while it is written, so that [RemoveTemps]
// tells it from one whose writer is gone. Create writes at path whatever
// path is; a file a user names is written by [CreateOutput].
func Create(path string) (*File, error) {
	f, err := createLocked(path)
	if err == nil {
		err = f.Chmod(0o644)
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	return &File{path: path, dest: path, f: f, bw: bufio.NewWriterSize(f, 1<<16), h: sha256.New()}, nil
}

// Write writes p and adds it to the hash.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("writing %s: %w", f.path, os.ErrClosed)
	}
	n, err := f.bw.Write(p)
	f.h.Write(p[:n])
	f.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", f.path, err)
	}
	return n, nil
}

// WriteAt writes p at offset off of what was written so far (to patch a
// header). The content then differs from what was hashed: Sum returns "".
// An output written as it is (not Seekable) cannot be patched.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if f.done {
		return 0, fmt.Errorf("writing %s: %w", f.path, os.ErrClosed)
	}
	if f.inPlace {
		return 0, fmt.Errorf("writing %s: it is written as it is (not a regular file): %w", f.path, errors.ErrUnsupported)
	}
	if err := f.bw.Flush(); err != nil {
		return 0, fmt.Errorf("writing %s: %w", f.path, err)
	}
	f.patched = true
	n, err := f.f.WriteAt(p, off)
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", f.path, err)
	}
	return n, nil
}

// Commit flushes and syncs the file, renames it to its destination (replacing
// what was there) and syncs the directory. On failure the temporary file is
// removed. An output written as it is is flushed and closed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("committing %s: %w", f.path, os.ErrClosed)
	}
	f.done = true
	if f.inPlace {
		err := f.bw.Flush()
		if cerr := f.f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		f.setSum()
		return nil
	}
	dest := f.dest
	err := f.bw.Flush()
	if err == nil {
		err = f.f.Sync()
	}
	if err == nil {
		// Renamed while still open and locked: RemoveTemps never takes
		// the temporary file of a writer that is finishing.
		err = os.Rename(f.f.Name(), dest)
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = SyncDir(filepath.Dir(dest))
	}
	if err != nil {
		os.Remove(f.f.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	f.setSum()
	return nil
}

// setSum sets the sum of what was written, unless it was patched.
func (f *File) setSum() {
	if !f.patched {
		f.sum = hex.EncodeToString(f.h.Sum(nil))
	}
}

// Abort removes the temporary file; after Commit it does nothing. An output
// written as it is is closed: what was written stays written.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	if !f.inPlace {
		os.Remove(f.f.Name())
	}
}

// Seekable reports whether the file can be patched with WriteAt: false for
// an output written as it is (a device, a FIFO, a socket, a descriptor).
func (f *File) Seekable() bool { return !f.inPlace }

// Sum returns the hex sha256 of the bytes written; "" before Commit and
// after WriteAt.
func (f *File) Sum() string { return f.sum }

// Size returns the number of bytes written so far.
func (f *File) Size() int64 { return f.n }

// Path returns the destination.
func (f *File) Path() string { return f.path }

// Write writes the file path with the bytes fn writes, through a temporary
// file (see [Create]); if fn fails nothing is left behind. It returns the
// sha256 of the content.
func Write(path string, fn func(io.Writer) error) (string, error) {
	f, err := Create(path)
	return fill(f, err, fn)
}

// fill writes f (opened with err) with the bytes fn writes and commits it,
// returning their sha256; if fn fails, f is aborted.
func fill(f *File, err error, fn func(io.Writer) error) (string, error) {
	if err != nil {
		return "", err
	}
	if err := fn(f); err != nil {
		f.Abort()
		return "", err
	}
	if err := f.Commit(); err != nil {
		return "", err
	}
	return f.Sum(), nil
}

// WriteFile writes data to path through a temporary file (see [Create]).
func WriteFile(path string, data []byte) error {
	_, err := Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return err
}

// SyncDir syncs a directory, so that the names created or renamed in it
// survive a crash.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// SHA256 returns the hex sha256 of the file at path.
func SHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("reading %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
