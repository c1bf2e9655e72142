package hubserve

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// fileHash is what the listing says of a file's content.
type fileHash struct {
	size    int64
	modTime time.Time
	sha256  string // of the content
	blob    string // git blob id of the content
}

// hash returns the hashes of the file at disk, computed once while its size
// and modification time stay as st gives them.
func (s *Server) hash(disk string, st fs.FileInfo) (fileHash, error) {
	s.mu.Lock()
	h, ok := s.hashes[disk]
	s.mu.Unlock()
	if ok && h.size == st.Size() && h.modTime.Equal(st.ModTime()) {
		return h, nil
	}
	f, err := os.Open(disk)
	if err != nil {
		return h, err
	}
	defer f.Close()
	sum, blob := sha256.New(), sha1.New()
	fmt.Fprintf(blob, "blob %d\x00", st.Size())
	if _, err := io.Copy(io.MultiWriter(sum, blob), f); err != nil {
		return h, err
	}
	h = fileHash{size: st.Size(), modTime: st.ModTime(), sha256: hex.EncodeToString(sum.Sum(nil)), blob: hex.EncodeToString(blob.Sum(nil))}
	s.mu.Lock()
	s.hashes[disk] = h
	s.mu.Unlock()
	return h, nil
}

// gitBlobID is git's id of a blob holding data: sha1("blob SIZE\x00" + data).
func gitBlobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// lfsPointer is the Git LFS pointer file git stores for a file of that sha256
// and size (the Git LFS specification, v1).
func lfsPointer(sha256 string, size int64) []byte {
	return fmt.Appendf(nil, "version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n", sha256, size)
}
