package dirlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHeldNamesTheHolder: a second Take without Wait fails at once with a
// HeldError naming this process as the holder; Unlock removes the file and is
// safe twice.
func TestHeldNamesTheHolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub", "idx")
	l, err := Take(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Take(context.Background(), dir, Options{})
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("second Take: %v, want a HeldError wrapping ErrHeld", err)
	}
	if want := fmt.Sprintf("pid %d, started ", os.Getpid()); !strings.HasPrefix(held.Holder, want) || held.Path != Path(dir) {
		t.Fatalf("HeldError names %q at %s, want %q... at %s", held.Holder, held.Path, want, Path(dir))
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(Path(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lock file is left after Unlock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
}

// TestWaitTakesTheLockOnceReleased: a waiting Take says once that it waits,
// naming the holder; it gives up when its context ends, and takes the lock
// when the holder releases it.
func TestWaitTakesTheLockOnceReleased(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	l, err := Take(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*poll)
	defer cancel()
	var said []string
	waiting := func(path, holder string) { said = append(said, path+": "+holder) }
	_, err = Take(ctx, dir, Options{Wait: true, Waiting: waiting})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("waiting past the deadline: %v, want the deadline and the holder", err)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], Path(dir)+": pid ") {
		t.Fatalf("Waiting was called %d times: %q, want once with the lock and the holder", len(said), said)
	}
	go func() {
		time.Sleep(poll / 2)
		l.Unlock()
	}()
	l2, err := Take(context.Background(), dir, Options{Wait: true})
	if err != nil {
		t.Fatalf("waiting for the lock: %v", err)
	}
	if _, err := Take(context.Background(), dir, Options{}); !errors.Is(err, ErrHeld) {
		t.Fatalf("the waiter's lock is not held: %v", err)
	}
	l2.Unlock()
}

// TestStaleLockIsTakenOver: a process that takes the lock and dies without
// Unlock leaves the file naming it; the next Take gets the lock at once and
// names itself.
func TestStaleLockIsTakenOver(t *testing.T) {
	if dir := os.Getenv("DIRLOCK_TEST_DIE_HOLDING"); dir != "" {
		if _, err := Take(context.Background(), dir, Options{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0) // no Unlock: the flock ends with the process
	}
	dir := filepath.Join(t.TempDir(), "idx")
	cmd := exec.Command(os.Args[0], "-test.run=^TestStaleLockIsTakenOver$")
	cmd.Env = append(os.Environ(), "DIRLOCK_TEST_DIE_HOLDING="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("holder process: %v\n%s", err, out)
	}
	dead := fmt.Sprintf("pid %d, started ", cmd.Process.Pid)
	if got := Holder(dir); !strings.HasPrefix(got, dead) {
		t.Fatalf("the dead holder left %q, want %q...", got, dead)
	}
	l, err := Take(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("a stale lock was not taken over: %v", err)
	}
	defer l.Unlock()
	if got, want := Holder(dir), fmt.Sprintf("pid %d, started ", os.Getpid()); !strings.HasPrefix(got, want) {
		t.Fatalf("the lock names %q after the takeover, want %q...", got, want)
	}
}

// TestLockRefusesLinksAndSpecialFiles: a lock path that is a symbolic link
// (to a file of someone else's), a FIFO or a directory is refused at once; the
// link's target is left as it was.
func TestLockRefusesLinksAndSpecialFiles(t *testing.T) {
	for _, kind := range []string{"symlink", "dangling symlink", "fifo", "directory"} {
		t.Run(kind, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "idx")
			victim := filepath.Join(root, "victim")
			os.WriteFile(victim, []byte("precious\n"), 0o644)
			lock := Path(dir)
			var err error
			switch kind {
			case "symlink":
				err = os.Symlink(victim, lock)
			case "dangling symlink":
				err = os.Symlink(filepath.Join(root, "nowhere"), lock)
			case "fifo":
				err = syscall.Mkfifo(lock, 0o644)
			case "directory":
				err = os.Mkdir(lock, 0o755)
			}
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				l, err := Take(context.Background(), dir, Options{})
				l.Unlock()
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Take hangs")
			}
			if !errors.Is(err, ErrNotRegular) && !(kind == "directory" && err != nil) {
				t.Fatalf("Take: %v, want ErrNotRegular", err)
			}
			if !strings.Contains(err.Error(), lock) {
				t.Errorf("the error does not name the lock %s: %v", lock, err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
				t.Errorf("the link's target was written: %q", b)
			}
			if _, err := os.Stat(filepath.Join(root, "nowhere")); err == nil {
				t.Error("a dangling link's target was created")
			}
		})
	}
}
