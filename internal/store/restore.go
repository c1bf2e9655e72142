package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/msrag/msrag/internal/safefile"
)

// asides returns the copies of the index directory dir that a publish
// stopped between its two renames may have left (see
// safefile.Replacer.Replace): safefile.AsideName, and the name earlier
// versions used (".NAME.msrag-tmp-RANDOM.old", which the staging cleanup
// matches, so it is looked at first).
func asides(dir string) []string {
	dir = filepath.Clean(dir)
	legacy, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+stagingMark+"*.old"))
	return append([]string{safefile.AsideName(dir)}, legacy...)
}

// restore, with dir's lock held, puts back a complete index left aside when
// dir is missing, and removes the aside copies when dir is a complete index.
func restore(dir string) error {
	for _, a := range asides(dir) {
		back, err := safefile.Restore(dir, a, hasManifest)
		if err != nil {
			return err
		}
		if back {
			// The index is back: the other copies are older or stale.
			return restore(dir)
		}
	}
	return nil
}

// restoreWait bounds how long a reader waits for dir's lock to put back an
// index left aside: a build holding it is between the two renames of its
// publish, which takes milliseconds.
const restoreWait = 10 * time.Second

// restoreMissing is what a reader does when dir is missing: if a complete
// copy of it was left aside, it takes dir's lock (which puts the copy back, see
// LockDir) and releases it. It reports whether dir exists afterwards.
func restoreMissing(dir string) bool {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	found := false
	for _, a := range asides(dir) {
		found = found || hasManifest(a)
	}
	if !found {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), restoreWait)
	defer cancel()
	l, err := LockDir(ctx, dir, true)
	if err != nil {
		return false
	}
	l.Unlock()
	_, err = os.Lstat(dir)
	return err == nil
}

// RestoreIn puts back every index in the directory parent that a build
// killed during its publish left aside, as IsIndex does for one: before
// the subdirectories of parent are taken as the shards of one index.
func RestoreIn(parent string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if dir, ok := asideOf(filepath.Join(parent, e.Name())); ok {
			restoreMissing(dir)
		}
	}
}

// asideOf returns the index directory whose aside copy path is (see
// asides), and whether it is one.
func asideOf(path string) (string, bool) {
	if dir, ok := safefile.AsideOf(path); ok {
		return dir, true
	}
	base := filepath.Base(path)
	name, _, ok := strings.Cut(strings.TrimPrefix(base, "."), stagingMark)
	if !ok || name == "" || !strings.HasPrefix(base, ".") || !strings.HasSuffix(base, ".old") {
		return "", false
	}
	return filepath.Join(filepath.Dir(path), name), true
}

// restoreLocked is LockDir's: it wraps restore's error.
func restoreLocked(dir string) error {
	if err := restore(dir); err != nil {
		return fmt.Errorf("restoring the index %s an interrupted build left aside: %w", dir, err)
	}
	return nil
}
