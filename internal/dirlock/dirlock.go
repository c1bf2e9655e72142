// Package dirlock is the lock of a directory that one process at a time
// writes: an index being built, a model being fetched into the cache.
//
// The lock of DIR is the file .NAME.lock beside it (NAME being DIR's base
// name), flock'd exclusively by its holder, who writes in it its pid, start
// time and host. Unlock removes the file, then releases it. A holder that
// dies without Unlock (killed, crashed) releases the flock with its last
// descriptor and leaves the file: a stale lock, which the next Take takes
// over, replacing the dead holder's note with its own. A file removed by its
// holder while another process waited on it is not the lock any more: the
// waiter notices (the path names another file, or none) and tries afresh.
// The lock file is never a symbolic link or a special file: Take refuses one
// (ErrNotRegular) rather than write through it.
package dirlock

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

// ErrHeld is wrapped by the error of Take when another holder (another
// process, or another Take in this one) has the lock.
var ErrHeld = errors.New("the lock is held")

// ErrNotRegular is wrapped by the error for a lock path that is a symbolic
// link or not a regular file: following the link would overwrite whatever it
// points to.
var ErrNotRegular = errors.New("not a regular file (a symbolic link, directory or device): refusing to write through it")

// HeldError is the error of Take when another holder has the lock: at once
// without Options.Wait (Err is ErrHeld), or when the context ended the wait
// (Err is the context's error).
type HeldError struct {
	Path   string // the lock file
	Holder string // what the holder wrote: "pid 1234, started 2026-01-02T03:04:05Z on host"
	Err    error
}

func (e *HeldError) Error() string {
	if errors.Is(e.Err, ErrHeld) {
		return fmt.Sprintf("%s is held by %s", e.Path, e.Holder)
	}
	return fmt.Sprintf("waiting for %s to release %s: %v", e.Holder, e.Path, e.Err)
}

func (e *HeldError) Unwrap() error { return e.Err }

// Options says what Take does when the lock is held.
type Options struct {
	// Wait polls until the lock is free or the context is done; false fails
	// at once.
	Wait bool
	// Waiting, when set and Wait is, is called once, before the first wait,
	// with the lock file and the holder.
	Waiting func(path, holder string)
}

// poll is the time between two tries of a waiting Take.
const poll = 200 * time.Millisecond

// Lock is a held lock of a directory. Its holder releases it with Unlock.
type Lock struct {
	f    *os.File
	path string
}

// Path returns the lock file of the directory dir.
func Path(dir string) string {
	dir = filepath.Clean(dir)
	return filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".lock")
}

// Take takes the lock of the directory dir, creating dir's parent when
// needed (dir itself need not exist). When another holder has it, Take fails
// with a *HeldError naming the holder, at once or, with o.Wait, once ctx is
// done.
func Take(ctx context.Context, dir string, o Options) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(dir)), 0o755); err != nil {
		return nil, err
	}
	path := Path(dir)
	for waited := false; ; waited = true {
		f, err := tryLock(path)
		if err == nil {
			host, _ := os.Hostname()
			note := fmt.Sprintf("pid %d, started %s on %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339), host)
			if _, err := f.WriteAt([]byte(note), 0); err != nil {
				l := &Lock{f: f, path: path}
				l.Unlock()
				return nil, fmt.Errorf("writing the lock %s: %w", path, err)
			}
			return &Lock{f: f, path: path}, nil
		}
		if !errors.Is(err, ErrHeld) {
			return nil, err
		}
		if !o.Wait {
			return nil, &HeldError{Path: path, Holder: Holder(dir), Err: ErrHeld}
		}
		if !waited && o.Waiting != nil {
			o.Waiting(path, Holder(dir))
		}
		select {
		case <-ctx.Done():
			return nil, &HeldError{Path: path, Holder: Holder(dir), Err: ctx.Err()}
		case <-time.After(poll):
		}
	}
}

// tryLock opens and flocks the lock file at path without waiting, and
// empties it. A file that its holder removed while this one waited for it is
// not the lock any more: then it reports ErrHeld, and the caller's next try
// creates a new one.
func tryLock(path string) (*os.File, error) {
	f, err := openRegular(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	held, err1 := f.Stat()
	now, err2 := os.Lstat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, ErrHeld
	}
	if err := f.Truncate(0); err != nil { // a stale lock's note
		f.Close()
		return nil, fmt.Errorf("writing the lock %s: %w", path, err)
	}
	return f, nil
}

// openRegular opens path with flag, never following a symbolic link and
// refusing anything but a regular file (a FIFO does not block the open).
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

// Holder returns who holds the lock of dir, as its holder wrote it, or
// "holder unknown".
func Holder(dir string) string {
	f, err := openRegular(Path(dir), os.O_RDONLY)
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
// twice and on a nil Lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	os.Remove(l.path)  // while still held: a waiter then sees a removed file
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}
