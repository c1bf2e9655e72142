package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
)

// ReadFile opens the file name of the index in dir and hands it, with its
// size, to parse. When want is not empty the bytes are hashed on their way to
// parse and must have sha256 want; a mismatch is an error wrapping
// [ErrMismatch], reported in place of parse's own error when parse failed on
// a changed file.
func ReadFile(dir, name, want string, parse func(r io.Reader, size int64) error) error {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if want == "" {
		return parse(f, st.Size())
	}
	h := sha256.New()
	perr := parse(io.TeeReader(f, h), st.Size())
	if _, err := io.Copy(h, f); err != nil { // what parse left unread
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if err := checkSum(h, path, want); err != nil {
		return err
	}
	return perr
}

func checkSum(h hash.Hash, path, want string) error {
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s has sha256 %s, the manifest says %s (file changed or corrupted): %w", path, got, want, ErrMismatch)
	}
	return nil
}

// ReadAll is a parse function for ReadFile that keeps the whole file.
func ReadAll(dst *[]byte) func(io.Reader, int64) error {
	return func(r io.Reader, size int64) error {
		b := make([]byte, size)
		_, err := io.ReadFull(r, b)
		*dst = b
		return err
	}
}
