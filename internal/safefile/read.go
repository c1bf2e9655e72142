package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrTooLarge is wrapped by ReadSmall's error for a file above its limit, and
// for one that is not a regular file (a device or a FIFO, which could be
// endless).
var ErrTooLarge = errors.New("not a regular file of a size msrag reads whole")

// ReadSmall reads a whole file msrag reads into memory (a manifest, a fusion
// model, a suite) after checking that it is a regular file of at most limit
// bytes: /dev/zero or a FIFO given as such a file fails at once instead of
// filling memory or blocking. Symbolic links are followed.
func ReadSmall(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (it is %s)", path, ErrTooLarge, TypeName(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than %d: %w", path, st.Size(), limit, ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", path, limit, ErrTooLarge)
	}
	return data, nil
}

// TypeName names a file's type for messages: "a directory", "a regular
// file", "a FIFO", "a socket", "a device", "a symbolic link", else "a file
// of another type".
func TypeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a file of another type"
}
