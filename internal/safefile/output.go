package safefile

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// maxLinks bounds the symbolic links followed from an output's name, as the
// kernel's ELOOP does.
const maxLinks = 40

// An output is where [CreateOutput] writes a file a user named.
type output struct {
	// path is the file to replace atomically: the name given, or what its
	// links lead to ("" when the output is written as it is).
	path string
	// fd >= 0 is one of this process's descriptors the name stands for
	// (/dev/stdout, /proc/self/fd/1): written as it is.
	fd int
	// mode is the type of an existing output that is written as it is: a
	// device, a FIFO or a socket.
	mode fs.FileMode
}

// ownFD matches the names of this process's own descriptors.
var ownFD = regexp.MustCompile(`^/(?:proc/(?:self|thread-self|([0-9]+))/fd|dev/fd)/([0-9]+)$`)

// descriptor returns the descriptor of this process that the absolute path
// p names, if it names one: /dev/stdout, /dev/fd/N, /proc/self/fd/N.
func descriptor(p string) (int, bool) {
	switch p {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	m := ownFD.FindStringSubmatch(p)
	if m == nil || m[1] != "" && m[1] != strconv.Itoa(os.Getpid()) {
		return -1, false
	}
	n, err := strconv.Atoi(m[2])
	return n, err == nil
}

// resolveOutput says where the output named path goes: see [CreateOutput].
func resolveOutput(path string) (output, error) {
	st, statErr := os.Stat(path) // through every link, as the kernel does
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return output{}, statErr
	}
	if statErr == nil && st.IsDir() {
		return output{}, fmt.Errorf("%s is a directory, not a file", path)
	}
	target, fd, err := followLinks(path)
	switch {
	case err == nil && fd >= 0:
		return output{fd: fd}, nil
	case statErr == nil && !st.Mode().IsRegular():
		return output{fd: -1, mode: st.Mode().Type()}, nil
	case err != nil:
		return output{}, err
	case statErr == nil:
		// An existing regular file: the one the links lead to, unless they
		// are of a kind this cannot follow (a /proc link to a file since
		// removed).
		if tst, err := os.Stat(target); err != nil || !os.SameFile(st, tst) {
			return output{}, fmt.Errorf("%s: cannot tell which file its links lead to (it reads as %s): refusing to replace it", path, target)
		}
	}
	return output{path: target, fd: -1}, nil
}

// followLinks follows the symbolic links of path's last part and returns the
// absolute name they lead to (which need not exist), or the descriptor of
// this process one of them names.
func followLinks(path string) (string, int, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", -1, err
	}
	for hops := 0; ; hops++ {
		if fd, ok := descriptor(p); ok {
			return "", fd, nil
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return p, -1, nil
		case err != nil:
			return "", -1, err
		case fi.Mode()&fs.ModeSymlink == 0:
			return p, -1, nil
		case hops == maxLinks:
			return "", -1, fmt.Errorf("%s: more than %d symbolic links", path, maxLinks)
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", -1, err
		}
		if !filepath.IsAbs(t) {
			// Relative to the link's directory as the kernel finds it
			// (its own links resolved), so that ".." goes where it does.
			dir, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return "", -1, fmt.Errorf("%s: following the link %s: %w", path, p, err)
			}
			t = filepath.Join(dir, t)
		}
		p = filepath.Clean(t)
	}
}

// CheckOutput fails when CreateOutput(path) would, as far as that can be
// told before anything is written: path is a directory, its links go
// nowhere one can write, or a new file's directory is missing or not
// writable. Call it before the work whose result goes there.
func CheckOutput(path string) error {
	o, err := resolveOutput(path)
	if err != nil {
		return err
	}
	if o.path == "" {
		return nil
	}
	dir := filepath.Dir(o.path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: its directory %s: %w", path, dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", path, dir, err)
	}
	return nil
}

// CreateOutput starts writing the output a user named path (msrag's --out
// files), which is never replaced unless it is a regular file:
//
//   - A regular file, or nothing, is written as [Create] writes: to a
//     temporary sibling renamed over it by Commit.
//   - A symbolic link is followed (through every link) to what it names,
//     and the file there is replaced (or created) as above: the link stays.
//   - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N (or a link to
//     one) are this process's descriptor N, written as it is: at its
//     offset, appended to when it was opened so.
//   - A device or a FIFO is opened for writing and written as it is; a
//     FIFO without a reader is waited for until ctx ends. A socket is
//     connected to and written.
//   - A directory is an error.
//
// What is written as it is cannot be taken back: Abort only closes it,
// and [File.Seekable] is false.
func CreateOutput(ctx context.Context, path string) (*File, error) {
	o, err := resolveOutput(path)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if o.path != "" {
		f, err := Create(o.path)
		if err != nil {
			return nil, err
		}
		f.path = path
		return f, nil
	}
	var out *os.File
	switch {
	case o.fd >= 0:
		out, err = dupFD(o.fd)
	case o.mode&fs.ModeSocket != 0:
		out, err = dialSocket(path)
	default:
		out, err = openWaiting(ctx, path, o.mode&fs.ModeNamedPipe != 0)
	}
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &File{path: path, f: out, bw: bufio.NewWriterSize(out, 1<<16), h: sha256.New(), inPlace: true}, nil
}

// WriteOutput writes the output path (see [CreateOutput]) with the bytes fn
// writes and returns their sha256; if fn fails, a file to be replaced is
// left as it was.
func WriteOutput(ctx context.Context, path string, fn func(io.Writer) error) (string, error) {
	f, err := CreateOutput(ctx, path)
	return fill(f, err, fn)
}

// dupFD returns a file of its own on this process's descriptor fd.
func dupFD(fd int) (*os.File, error) {
	n, err := syscall.Dup(fd)
	if err != nil {
		return nil, fmt.Errorf("descriptor %d: %w", fd, err)
	}
	syscall.CloseOnExec(n)
	return os.NewFile(uintptr(n), "/dev/fd/"+strconv.Itoa(fd)), nil
}

// dialSocket connects to the Unix socket path.
func dialSocket(path string) (*os.File, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.(*net.UnixConn).File()
}

// pollReader is how often openWaiting tries again while a FIFO has no
// reader.
const pollReader = 50 * time.Millisecond

// openWaiting opens the existing device or FIFO path for writing, without
// creating or truncating it. While a FIFO has no reader, the open is tried
// again until one opens it or ctx ends, rather than left blocking in
// open(2), where no signal would reach it.
func openWaiting(ctx context.Context, path string, fifo bool) (*os.File, error) {
	for fifo {
		probe, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			defer probe.Close() // held until the blocking open has the reader
			break
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a reader of the FIFO: %w", context.Cause(ctx))
		case <-time.After(pollReader):
		}
	}
	return os.OpenFile(path, os.O_WRONLY, 0)
}
