package safefile_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/safefile"
)

func writeOutput(t *testing.T, path, data string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := safefile.WriteOutput(ctx, path, func(w io.Writer) error {
		_, err := io.WriteString(w, data)
		return err
	})
	return err
}

func fileType(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Type()
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestOutputRegularFile checks that a regular output is replaced atomically:
// the old content until Commit, the new after, nothing else left.
func TestOutputRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.trec")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := safefile.CreateOutput(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if got := readString(t, path); got != "old" {
		t.Fatalf("before Commit the file holds %q", got)
	}
	if !f.Seekable() {
		t.Error("a regular output is not Seekable")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, path); got != "new" {
		t.Errorf("after Commit the file holds %q", got)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("directory holds %v", n)
	}
}

// TestOutputFollowsLinks checks that a symbolic link is followed to what it
// names, through several links and relative ones, and that the file there
// is replaced while the links stay links (before, the link was replaced by
// a file and its target left as it was).
func TestOutputFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "elsewhere")
	os.Mkdir(elsewhere, 0o755)
	target := filepath.Join(elsewhere, "target.trec")
	os.WriteFile(target, []byte("old"), 0o644)
	// out -> hop (relative) -> elsewhere/target.trec
	os.Symlink("elsewhere/target.trec", filepath.Join(dir, "hop"))
	out := filepath.Join(dir, "out")
	os.Symlink("hop", out)
	if err := writeOutput(t, out, "new"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{out, filepath.Join(dir, "hop")} {
		if fileType(t, l) != fs.ModeSymlink {
			t.Errorf("%s is no longer a symbolic link", l)
		}
	}
	if got := readString(t, target); got != "new" {
		t.Errorf("the link's target holds %q, want new", got)
	}
	if n := entries(t, elsewhere); len(n) != 1 {
		t.Errorf("the target's directory holds %v", n)
	}

	// A link to a file not there yet: the file is made where it points.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(elsewhere, "new.trec"), dangling)
	if err := writeOutput(t, dangling, "made"); err != nil {
		t.Fatal(err)
	}
	if fileType(t, dangling) != fs.ModeSymlink || readString(t, filepath.Join(elsewhere, "new.trec")) != "made" {
		t.Error("a link to nothing: not written through")
	}

	// ".." in a link's target is taken from the directory the kernel finds.
	os.Mkdir(filepath.Join(elsewhere, "sub"), 0o755)
	os.Symlink(filepath.Join(elsewhere, "sub"), filepath.Join(dir, "subdir"))
	os.Symlink("../up.trec", filepath.Join(elsewhere, "sub", "up"))
	if err := writeOutput(t, filepath.Join(dir, "subdir", "up"), "up"); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(elsewhere, "up.trec")); got != "up" {
		t.Errorf("through a linked directory: %q", got)
	}
}

// TestOutputFIFO checks that a FIFO is written to its reader and stays a
// FIFO (before, it was replaced by a regular file and its reader got
// nothing), and that a FIFO without a reader is waited for until the
// context ends.
func TestOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		data, _ := io.ReadAll(f)
		f.Close() // before the test goes on: a reader still there would let a writer in
		got <- string(data)
	}()
	want := strings.Repeat("0123456789", 20000) // beyond a pipe's buffer
	if err := writeOutput(t, fifo, want); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != want {
		t.Errorf("the reader got %d bytes, want %d", len(s), len(want))
	}
	if fileType(t, fifo) != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v", fileType(t, fifo))
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Errorf("directory holds %v", n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := safefile.CreateOutput(ctx, fifo)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a FIFO without a reader: %v, want the context's end", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v after the context ended", d)
	}
	if fileType(t, fifo) != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v", fileType(t, fifo))
	}
}

// TestOutputDevice checks that a character device is written as it is and
// stays one: one made here where mknod is permitted (as root), and
// /dev/null through a symbolic link always.
func TestOutputDevice(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "null")
	os.Symlink("/dev/null", link)
	if err := writeOutput(t, link, "into the void"); err != nil {
		t.Fatal(err)
	}
	if fileType(t, link) != fs.ModeSymlink || fileType(t, "/dev/null") != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("link %v, /dev/null %v", fileType(t, link), fileType(t, "/dev/null"))
	}
	f, err := safefile.CreateOutput(context.Background(), link)
	if err != nil {
		t.Fatal(err)
	}
	if f.Seekable() {
		t.Error("a device output is Seekable")
	}
	if _, err := f.WriteAt([]byte("x"), 0); err == nil {
		t.Error("WriteAt on a device output succeeded")
	}
	f.Abort()

	dev := filepath.Join(dir, "dev-null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("mknod not permitted here (%v): the device made here is not tried", err)
		return
	}
	if err := writeOutput(t, dev, "into the void"); err != nil {
		t.Fatal(err)
	}
	if fileType(t, dev) != fs.ModeDevice|fs.ModeCharDevice {
		t.Errorf("the device is now %v", fileType(t, dev))
	}
	if n := entries(t, dir); len(n) != 2 {
		t.Errorf("directory holds %v", n)
	}
}

// TestOutputOwnDescriptor checks that /dev/fd/N, /proc/self/fd/N and a link
// to one are this process's descriptor N, written as it is (before, the
// link was replaced by a file).
func TestOutputOwnDescriptor(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fd := int(w.Fd())
	link := filepath.Join(dir, "stdout")
	os.Symlink("/proc/self/fd/"+strconv.Itoa(fd), link)
	for _, p := range []string{link, "/dev/fd/" + strconv.Itoa(fd), "/proc/self/fd/" + strconv.Itoa(fd)} {
		if err := writeOutput(t, p, p+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	data, _ := io.ReadAll(r)
	if want := link + "\n/dev/fd/" + strconv.Itoa(fd) + "\n/proc/self/fd/" + strconv.Itoa(fd) + "\n"; string(data) != want {
		t.Errorf("the pipe got %q, want %q", data, want)
	}
	if fileType(t, link) != fs.ModeSymlink {
		t.Error("the link was replaced")
	}
}

// TestOutputSocket checks that a Unix socket is connected to and written,
// and stays a socket.
func TestOutputSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		data, _ := io.ReadAll(c)
		got <- string(data)
	}()
	if err := writeOutput(t, sock, "over the socket"); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "over the socket" {
		t.Errorf("the listener got %q", s)
	}
	if fileType(t, sock) != fs.ModeSocket {
		t.Errorf("the socket is now %v", fileType(t, sock))
	}
}

// TestOutputRefusals checks what CheckOutput and CreateOutput refuse: a
// directory (also through a link), a missing directory, a loop of links.
func TestOutputRefusals(t *testing.T) {
	dir := t.TempDir()
	os.Symlink(dir, filepath.Join(dir, "todir"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	for _, p := range []string{dir, filepath.Join(dir, "todir"), filepath.Join(dir, "missing", "x"), filepath.Join(dir, "loop")} {
		if err := safefile.CheckOutput(p); err == nil {
			t.Errorf("CheckOutput(%s) = nil", p)
		}
		if _, err := safefile.CreateOutput(context.Background(), p); err == nil {
			t.Errorf("CreateOutput(%s) = nil", p)
		}
	}
	for _, p := range []string{filepath.Join(dir, "new"), "/dev/null"} {
		if err := safefile.CheckOutput(p); err != nil {
			t.Errorf("CheckOutput(%s): %v", p, err)
		}
	}
}
