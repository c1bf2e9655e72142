package safefile

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// createLocked creates a temporary sibling of path and flock's it, for as
// long as its writer keeps it open: the lock ends with the writer, whether
// it commits, aborts or is killed. A RemoveTemps that took the file between
// its creation and its lock (and may have removed it) makes it start over
// with another name.
func createLocked(path string) (*os.File, error) {
	for try := 0; ; try++ {
		f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tempSuffix)
		if err != nil {
			return nil, err
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if noLocks(err) {
			err = nil // written unlocked, as RemoveTemps then assumes
		}
		if err == nil && stillNamed(f) {
			return f, nil
		}
		f.Close() // RemoveTemps holds it, or removed it: it removes it
		if err != nil && !errors.Is(err, syscall.EWOULDBLOCK) || try == 10 {
			os.Remove(f.Name())
			return nil, fmt.Errorf("locking %s: %v", f.Name(), cmp.Or(err, errors.New("removed by another process")))
		}
	}
}

// stillNamed reports whether f's name still names f.
func stillNamed(f *os.File) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(f.Name())
	return err == nil && os.SameFile(a, b)
}

// RemoveTemps removes the temporary siblings of path that [Create] left
// when its writer was killed before Commit or Abort (".NAME.tmp-*"); a
// writer that ends in any other way leaves none. A temporary file whose
// writer is still at work (it holds the file's lock: another run of the
// same task, at the same time) is left to it.
func RemoveTemps(path string) error {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+tempSuffix
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing temporary files of %s: %w", path, err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		if err := removeDeadTemp(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("removing a temporary file of %s: %w", path, err)
		}
	}
	return nil
}

// removeDeadTemp removes the temporary file p unless its writer holds its
// lock. One that is gone already (committed, aborted) is no error.
func removeDeadTemp(p string) error {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return nil // its writer is at work
	case err != nil && !noLocks(err):
		return fmt.Errorf("%s: %w", p, err)
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// noLocks reports a file system that offers no flock: its temporary files
// are written unlocked, and RemoveTemps removes them all, as a rerun of the
// task that owns them alone may then call it.
func noLocks(err error) bool {
	return errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.EINVAL)
}
