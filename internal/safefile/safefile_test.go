package safefile_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/safefile"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitWritesAndHashes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.bin")
	f, err := safefile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("hello, safe world\n")
	f.Write(data[:5])
	f.Write(data[5:])
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination visible before Commit: %v", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // after Commit: nothing
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(data) {
		t.Fatalf("read back %q, %v", got, err)
	}
	want := sha256.Sum256(data)
	if f.Sum() != hex.EncodeToString(want[:]) || f.Size() != int64(len(data)) {
		t.Errorf("Sum %s Size %d, want %x %d", f.Sum(), f.Size(), want, len(data))
	}
	if s, err := safefile.SHA256(path); err != nil || s != f.Sum() {
		t.Errorf("SHA256 of the file = %s, %v; Sum = %s", s, err, f.Sum())
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("directory holds %v, want only out.bin", n)
	}
}

func TestAbortAndFailedWriteLeaveNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.bin")
	f, err := safefile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	boom := errors.New("boom")
	if _, err := safefile.Write(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Write: %v, want %v", err, boom)
	}
	if n := entries(t, dir); len(n) != 0 {
		t.Errorf("directory holds %v after Abort and a failed Write", n)
	}
	if err := safefile.WriteFile(filepath.Join(dir, "no", "such", "x"), []byte("x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WriteFile into a missing directory: %v", err)
	}
}

func TestReplaceDir(t *testing.T) {
	root := t.TempDir()
	dst := filepath.Join(root, "index")
	mk := func(name, content string) string {
		d, err := os.MkdirTemp(root, ".stage-")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if err := safefile.ReplaceDir(mk("a", "1"), dst, nil); err != nil {
		t.Fatal(err)
	}
	isIndex := func(d string) bool { _, err := os.Stat(filepath.Join(d, "a")); return err == nil }
	if err := safefile.ReplaceDir(mk("a", "2"), dst, isIndex); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a")); string(b) != "2" {
		t.Errorf("after replacing, a = %q", b)
	}
	other := filepath.Join(root, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "keep"), []byte("mine"), 0o644)
	stage := mk("a", "3")
	if err := safefile.ReplaceDir(stage, other, isIndex); !errors.Is(err, safefile.ErrNotReplaceable) {
		t.Errorf("replacing a directory the check refuses: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "keep")); string(b) != "mine" {
		t.Errorf("refused directory changed: %q", b)
	}
	os.RemoveAll(stage)
	if n := entries(t, root); len(n) != 2 {
		t.Errorf("root holds %v, want index and other only", n)
	}
}

// TestReadSmall: a regular file within the limit is read; a larger one, a
// device and a FIFO fail at once.
func TestReadSmall(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("12345"), 0o644)
	if b, err := safefile.ReadSmall(small, 5); err != nil || string(b) != "12345" {
		t.Fatalf("small: %q, %v", b, err)
	}
	if _, err := safefile.ReadSmall(small, 4); !errors.Is(err, safefile.ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, dir} {
		done := make(chan error, 1)
		go func() { _, err := safefile.ReadSmall(p, 1<<20); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, safefile.ErrTooLarge) {
				t.Errorf("%s: %v, want safefile.ErrTooLarge", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadSmall blocks", p)
		}
	}
}

// replaceSteps replaces the directory holding a = "1" with one holding
// a = "2" through r, and returns, for each step, the names in root and what
// dst/a held just before it.
func replaceSteps(t *testing.T, r safefile.Replacer) (root, dst string, seen map[safefile.Step]string) {
	t.Helper()
	root = t.TempDir()
	dst = filepath.Join(root, "index")
	mk := func(content string) string {
		d, err := os.MkdirTemp(root, ".stage-")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "a"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	if err := safefile.ReplaceDir(mk("1"), dst, nil); err != nil {
		t.Fatal(err)
	}
	seen = map[safefile.Step]string{}
	r.Step = func(step safefile.Step) {
		b, err := os.ReadFile(filepath.Join(dst, "a"))
		if err != nil {
			seen[step] = "missing"
			return
		}
		seen[step] = string(b)
	}
	if err := r.Replace(mk("2"), dst, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a")); string(b) != "2" {
		t.Errorf("after replacing, a = %q", b)
	}
	if n := entries(t, root); len(n) != 1 {
		t.Errorf("root holds %v, want the index only", n)
	}
	return root, dst, seen
}

// TestReplaceDirExchanges: the old directory and the new are exchanged in
// one rename, so that before and after each step the destination holds a
// whole one, and no aside name is used.
func TestReplaceDirExchanges(t *testing.T) {
	_, _, seen := replaceSteps(t, safefile.Replacer{})
	want := map[safefile.Step]string{safefile.StepExchange: "1", safefile.StepRemove: "2"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("destination before each step: %v, want %v (a file system without RENAME_EXCHANGE takes the two renames)", seen, want)
	}
}

// TestReplaceDirWithoutExchange: the two renames leave the destination
// missing between them, the old one whole at its aside name.
func TestReplaceDirWithoutExchange(t *testing.T) {
	_, _, seen := replaceSteps(t, safefile.Replacer{NoExchange: true})
	want := map[safefile.Step]string{safefile.StepAside: "1", safefile.StepInPlace: "missing", safefile.StepRemove: "2"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("destination before each step: %v, want %v", seen, want)
	}
}

// TestRestore: an aside copy with no directory is put back; beside a
// complete directory it is removed; anything else is left.
func TestRestore(t *testing.T) {
	complete := func(d string) bool { _, err := os.Stat(filepath.Join(d, "a")); return err == nil }
	for _, c := range []struct {
		name              string
		dir, aside        string // "": absent; "-": an empty directory; else a's content
		back              bool
		wantDir, wantSide string
	}{
		{"lone copy", "", "1", true, "1", ""},
		{"stale copy", "2", "1", false, "2", ""},
		{"directory not complete", "-", "1", false, "-", "1"},
		{"copy not complete", "", "-", false, "", "-"},
		{"no copy", "2", "", false, "2", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			aside := safefile.AsideName(dir)
			put := func(d, v string) {
				if v == "" {
					return
				}
				os.Mkdir(d, 0o755)
				if v != "-" {
					os.WriteFile(filepath.Join(d, "a"), []byte(v), 0o644)
				}
			}
			get := func(d string) string {
				if _, err := os.Stat(d); err != nil {
					return ""
				}
				b, err := os.ReadFile(filepath.Join(d, "a"))
				if err != nil {
					return "-"
				}
				return string(b)
			}
			put(dir, c.dir)
			put(aside, c.aside)
			back, err := safefile.Restore(dir, aside, complete)
			if err != nil || back != c.back {
				t.Fatalf("Restore = %v, %v, want %v", back, err, c.back)
			}
			if get(dir) != c.wantDir || get(aside) != c.wantSide {
				t.Errorf("directory %q, aside %q; want %q, %q", get(dir), get(aside), c.wantDir, c.wantSide)
			}
		})
	}
}

func TestAsideName(t *testing.T) {
	a := safefile.AsideName("/x/idx/")
	if a != "/x/.idx.msrag-old" {
		t.Errorf("AsideName = %s", a)
	}
	if d, ok := safefile.AsideOf(a); !ok || d != "/x/idx" {
		t.Errorf("AsideOf(%s) = %s, %v", a, d, ok)
	}
	for _, p := range []string{"/x/idx", "/x/.msrag-old", "/x/idx.msrag-old", "/x/.idx.msrag-tmp-1"} {
		if d, ok := safefile.AsideOf(p); ok {
			t.Errorf("AsideOf(%s) = %s, true", p, d)
		}
	}
}
