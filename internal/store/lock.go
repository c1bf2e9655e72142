package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/msrag/msrag/internal/dirlock"
)

// ErrBusy is wrapped by the error of [LockDir] when another build holds the
// directory's lock.
var ErrBusy = errors.New("the index is locked")

// Lock is an exclusive lock on an index directory: the [dirlock.Lock] of
// the directory, an flock'd file beside it (".NAME.lock" in the same parent)
// that holds the holder's pid and start time. Unlock removes the file; the
// lock also ends with the process, leaving the file, which the next LockDir
// takes over.
type Lock = dirlock.Lock

// LockDir takes the lock of the index directory dir, creating its parent
// when needed. Holding it, it finishes what a build killed during its
// publish left: an index left aside with dir missing is put back, and
// aside copies beside a complete dir are removed. When another process (or another LockDir in this one) holds
// it, LockDir fails at once with an error wrapping [ErrBusy] that names the
// holder, or with wait polls until the lock is free or ctx is done.
func LockDir(ctx context.Context, dir string, wait bool) (*Lock, error) {
	l, err := dirlock.Take(ctx, dir, dirlock.Options{Wait: wait})
	var held *dirlock.HeldError
	switch {
	case errors.As(err, &held) && errors.Is(held.Err, dirlock.ErrHeld):
		return nil, fmt.Errorf("another build (%s) is writing %s: %w", held.Holder, dir, ErrBusy)
	case errors.As(err, &held):
		return nil, fmt.Errorf("waiting for the build (%s) writing %s: %w", held.Holder, dir, held.Err)
	case err != nil:
		return nil, err
	}
	if err := restoreLocked(dir); err != nil {
		l.Unlock()
		return nil, err
	}
	return l, nil
}
