package msrag

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/indexfile"
	"github.com/msrag/msrag/internal/store"
)

// FormatVersion is the on-disk format this code writes; indices of formats 1
// and 2 are read too (package indexfile says how).
const FormatVersion = indexfile.FormatVersion

// Manifest is an index's manifest.json: what it holds and how it was made.
// Its fields are documented in package indexfile, the on-disk schema.
type Manifest = indexfile.Manifest

// WindowInfo describes one window of an index and its files.
type WindowInfo = indexfile.WindowInfo

// ModelInfo identifies the embedding model an index was built with, and its
// Origin how to open that model again.
type ModelInfo = indexfile.ModelInfo

// Input is a file a build read, as its manifest records it (Manifest.Inputs).
type Input = indexfile.Input

// ErrIndexMismatch is wrapped by errors from Open when an index does not match
// its files or the embedder it is opened with.
var ErrIndexMismatch = store.ErrMismatch

// ErrBusy is wrapped by the error of a build or LockIndex when another build
// is writing the same index directory.
var ErrBusy = store.ErrBusy

// ReadManifest reads the manifest of the index in dir.
func ReadManifest(dir string) (*Manifest, error) {
	m, err := store.ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	return m, nil
}

// IsIndex reports whether dir holds an index (a manifest).
func IsIndex(dir string) bool { return store.IsIndex(dir) }

// ShardDirs returns the index directories dir stands for: dir itself when
// it holds an index, else its subdirectories that hold one, in name order
// (the shards of a sharded build); nil when there are none. Hidden names
// are not shards: a build stages an index, and keeps the one it replaces,
// under a hidden name beside it.
func ShardDirs(dir string) []string {
	if IsIndex(dir) {
		return []string{dir}
	}
	store.RestoreIn(dir)
	subs, _ := filepath.Glob(filepath.Join(dir, "*"))
	var shards []string
	for _, s := range subs {
		if !strings.HasPrefix(filepath.Base(s), ".") && IsIndex(s) {
			shards = append(shards, s)
		}
	}
	return shards
}

// IndexLock is the lock of an index directory: an flock'd file beside it
// (".NAME.lock") that every build of the directory holds while it writes.
type IndexLock struct {
	l   *store.Lock
	dir string
}

// LockIndex takes the lock of the index directory dir. When another build
// holds it, LockIndex fails at once with an error wrapping ErrBusy that names
// the holder's pid and start time, or with wait polls until it is free or
// ctx is done. Hold it across a decision to reuse or rebuild an index and
// pass it to Build in Config.Lock.
func LockIndex(ctx context.Context, dir string, wait bool) (*IndexLock, error) {
	l, err := store.LockDir(ctx, dir, wait)
	if err != nil {
		return nil, fmt.Errorf("msrag: %w", err)
	}
	return &IndexLock{l: l, dir: dir}, nil
}

// Unlock releases the lock; it is safe to call twice.
func (l *IndexLock) Unlock() error {
	if l == nil {
		return nil
	}
	return l.l.Unlock()
}

// windowsOf returns the windows a manifest records, in order.
func windowsOf(m *Manifest) []chunk.Window {
	out := make([]chunk.Window, len(m.Windows))
	for i, w := range m.Windows {
		out[i] = w.Window()
	}
	return out
}
