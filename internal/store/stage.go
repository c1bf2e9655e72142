package store

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/msrag/msrag/internal/safefile"
)

// stagingMark sits in the name of a staging directory: ".NAME.msrag-tmp-RANDOM"
// beside the index directory NAME.
const stagingMark = ".msrag-tmp-"

// Stage is an index directory being written: a temporary sibling that
// Publish renames into place.
type Stage struct {
	dir, tmp string
	lock     *Lock
	ownLock  bool
	done     bool
}

// NewStage starts writing the index directory dir. lock must be dir's lock,
// held by the caller until the Stage is published or aborted; nil makes
// NewStage take it (as [LockDir] with wait) and Publish or Abort release it.
// Staging directories of dir left by killed builds are removed: while the
// lock is held, no live build has one.
func NewStage(ctx context.Context, dir string, lock *Lock, wait bool) (*Stage, error) {
	dir = filepath.Clean(dir)
	s := &Stage{dir: dir, lock: lock}
	if lock == nil {
		l, err := LockDir(ctx, dir, wait)
		if err != nil {
			return nil, err
		}
		s.lock, s.ownLock = l, true
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	old, _ := filepath.Glob(filepath.Join(parent, "."+base+stagingMark+"*"))
	for _, o := range old {
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
// its sha256, computed as the bytes were written.
func (s *Stage) Create(name string, fn func(io.Writer) error) (string, error) {
	return safefile.Write(filepath.Join(s.tmp, name), fn)
}

// Publish writes the manifest and moves the complete directory into place,
// replacing an earlier index there (but never a directory that is not an
// index: neither a manifest nor empty). The lock is released if NewStage
// took it.
func (s *Stage) Publish(m *Manifest) error {
	defer s.release()
	data, err := encodeManifest(m)
	if err == nil {
		err = safefile.WriteFile(filepath.Join(s.tmp, ManifestName), data)
	}
	if err == nil {
		err = safefile.ReplaceDir(s.tmp, s.dir, replaceable)
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

// replaceable reports whether dir may be replaced by a new index: it holds a
// manifest or nothing at all.
func replaceable(dir string) bool {
	if IsIndex(dir) {
		return true
	}
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}
