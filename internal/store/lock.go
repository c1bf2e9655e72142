package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrBusy is wrapped by the error of [LockDir] when another build holds the
// directory's lock.
var ErrBusy = errors.New("the index is locked")

// Lock is an exclusive lock on an index directory, held through an flock'd
// file beside it (".NAME.lock" in the same parent) that holds the holder's pid
// and start time. Unlock removes the file; the lock also ends with the
// process, leaving the file, which the next LockDir takes over.
type Lock struct {
	f    *os.File
	path string
}

// lockPath returns the lock file of the index directory dir.
func lockPath(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
}

// LockDir takes the lock of the index directory dir, creating its parent
// when needed. Holding it, it finishes what a build killed during its
// publish left: an index left aside with dir missing is put back, and
// aside copies beside a complete dir are removed. When another process (or another LockDir in this one) holds
// it, LockDir fails at once with an error wrapping [ErrBusy] that names the
// holder, or with wait polls until the lock is free or ctx is done.
func LockDir(ctx context.Context, dir string, wait bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return nil, err
	}
	path := lockPath(dir)
	for {
		f, err := tryLock(path)
		if err == nil {
			host, _ := os.Hostname()
			note := fmt.Sprintf("pid %d, started %s on %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), host)
			f.WriteAt([]byte(note), 0)
			l := &Lock{f: f, path: path}
			if err := restoreLocked(dir); err != nil {
				l.Unlock()
				return nil, err
			}
			return l, nil
		}
		if !errors.Is(err, ErrBusy) {
			return nil, err
		}
		if !wait {
			return nil, fmt.Errorf("another build (%s) is writing %s: %w", holder(path), dir, ErrBusy)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the build (%s) writing %s: %w", holder(path), dir, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// tryLock opens and flocks the lock file at path without waiting. A file
// that its holder removed while this one waited for it is not the lock any
// more: then it reports ErrBusy, and the caller's next try creates a new one.
func tryLock(path string) (*os.File, error) {
	f, err := openRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, ErrBusy
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing the lock %s: %w", path, err)
	}
	return f, nil
}

// ErrNotRegular is wrapped by the error for a path msrag writes that is a
// symbolic link or not a regular file: following the link would overwrite
// whatever it points to.
var ErrNotRegular = errors.New("not a regular file (a symbolic link, directory or device): refusing to write through it")

// openRegular opens path with flag, never following a symbolic link and
// refusing anything but a regular file.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, ErrNotRegular
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, ErrNotRegular
	}
	return f, nil
}

// holder reads who holds the lock, as its holder wrote it.
func holder(path string) string {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return "holder unknown"
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 512))
	if s := strings.TrimSpace(string(b)); err == nil && s != "" {
		return s
	}
	return "holder unknown"
}

// Unlock removes the lock file and releases the lock; it is safe to call
// twice.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	os.Remove(l.path)  // while still held: a waiter then sees a removed file
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
