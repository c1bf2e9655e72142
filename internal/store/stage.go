package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/internal/safefile"
)

// stagingMark sits in the name of a staging directory: ".NAME.msrag-tmp-RANDOM"
// beside the index directory NAME.
const stagingMark = ".msrag-tmp-"

// Stage is an index directory being written: a temporary sibling that
// Publish renames into place. It is written under the context NewStage was
// given: when that ends, Create stops within a piece of writePiece bytes
// and Publish publishes nothing, so that an interrupted build stops
// promptly even while it writes files of hundreds of megabytes.
type Stage struct {
	ctx      context.Context // the build's: it lives as long as the Stage
	dir, tmp string
	lock     *Lock
	ownLock  bool
	done     bool
	// Replace moves the staging directory into place; its zero value is
	// safefile.ReplaceDir's. Tests set its Step to look between the steps.
	Replace safefile.Replacer
}

// writePiece is the most bytes Create writes without looking at the
// context: about 10 ms of writing and hashing. A FAISS index hands over its
// vectors in one write of hundreds of megabytes.
const writePiece = 8 << 20

// NewStage starts writing the index directory dir. lock must be dir's lock,
// held by the caller until the Stage is published or aborted; nil makes
// NewStage take it (as [LockDir] with wait) and Publish or Abort release it.
// Staging directories of dir left by killed builds are removed (while the
// lock is held, no live build has one), except a complete index while dir
// is none: the lock put back an index left aside (see LockDir), and the
// cleanup never removes the last complete copy.
func NewStage(ctx context.Context, dir string, lock *Lock, wait bool) (*Stage, error) {
	dir = filepath.Clean(dir)
	s := &Stage{ctx: ctx, dir: dir, lock: lock}
	if lock == nil {
		l, err := LockDir(ctx, dir, wait)
		if err != nil {
			return nil, err
		}
		s.lock, s.ownLock = l, true
	}
	if err := CheckReplaceable(dir); err != nil {
		s.release()
		return nil, err
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	old, _ := filepath.Glob(filepath.Join(parent, "."+base+stagingMark+"*"))
	for _, o := range old {
		if hasManifest(o) && !hasManifest(dir) {
			continue
		}
		os.RemoveAll(o)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+stagingMark)
	if err == nil {
		err = os.Chmod(tmp, 0o755)
	}
	if err != nil {
		s.release()
		return nil, fmt.Errorf("creating a staging directory beside %s: %w", dir, err)
	}
	s.tmp = tmp
	return s, nil
}

// Dir returns the directory the stage will be published as.
func (s *Stage) Dir() string { return s.dir }

// Create writes the file name of the index with what fn writes and returns
// its sha256, computed as the bytes were written. When the Stage's context
// ends it stops, leaving no file, with the context's error.
func (s *Stage) Create(name string, fn func(io.Writer) error) (string, error) {
	return safefile.Write(filepath.Join(s.tmp, name), func(w io.Writer) error {
		return fn(ctxWriter{ctx: s.ctx, w: w})
	})
}

// ctxWriter writes to w in pieces of at most writePiece bytes, and stops
// with ctx's error once ctx has ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := c.ctx.Err(); err != nil {
			return n, err
		}
		k, err := c.w.Write(p[:min(len(p), writePiece)])
		n += k
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// Publish writes the manifest and moves the complete directory into place,
// replacing an earlier index there (but never a directory that is not an
// index: neither a manifest nor empty). The lock is released if NewStage
// took it. After the Stage's context ended it publishes nothing and
// returns the context's error.
func (s *Stage) Publish(m *Manifest) error {
	defer s.release()
	err := s.ctx.Err()
	var data []byte
	if err == nil {
		data, err = encodeManifest(m)
	}
	if err == nil {
		err = safefile.WriteFile(filepath.Join(s.tmp, ManifestName), data)
	}
	var why error // what changed at dir during the build
	if err == nil {
		err = s.Replace.Replace(s.tmp, s.dir, func(d string) bool { why = CheckReplaceable(d); return why == nil })
	}
	if why != nil {
		err = why
	}
	if err != nil {
		os.RemoveAll(s.tmp)
		return err
	}
	s.done = true
	return nil
}

// Abort removes the staging directory; after Publish it does nothing.
func (s *Stage) Abort() {
	if !s.done {
		s.done = true
		os.RemoveAll(s.tmp)
	}
	s.release()
}

func (s *Stage) release() {
	if s.ownLock {
		s.lock.Unlock()
		s.ownLock = false
	}
}

// CheckReplaceable fails, wrapping safefile.ErrNotReplaceable and saying
// why, unless a new index may be published at dir: nothing is there, or an
// index (a manifest) or an empty directory. A file, a device, a symbolic
// link (whose replacement would leave what it names as it was) or a
// directory of other files is never replaced. NewStage checks it before
// any work, Publish again.
func CheckReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		t, _ := os.Readlink(dir)
		return fmt.Errorf("%s is a symbolic link (to %s), which an index would replace, leaving what it names as it was: give that directory itself: %w", dir, t, safefile.ErrNotReplaceable)
	case !fi.IsDir():
		return fmt.Errorf("%s is %s, not an index directory: %w", dir, safefile.TypeName(fi.Mode()), safefile.ErrNotReplaceable)
	case hasManifest(dir):
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("%s holds %d entries (such as %s) and no %s: it is not an index, and an index replaces its directory whole (move them away, or give another directory): %w",
		dir, len(entries), entries[0].Name(), ManifestName, safefile.ErrNotReplaceable)
}
