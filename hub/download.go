package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"

	"github.com/msrag/msrag/internal/safefile"
)

// Download writes f.Path of repo at rev to dst and returns the sha256 of its
// content (hex). The body streams into a temporary file beside dst while its
// sha256 (and, for a file stored in git itself, its git blob id) is computed;
// only when the size matches f.Size (or the Content-Length, when f.Size is
// -1), the sha256 matches f.SHA256 and the blob id matches f.OID is the file
// renamed to dst. On any failure, a cancelled ctx included, nothing is left
// at dst or beside it. dst's directory must exist.
func (c *Client) Download(ctx context.Context, repo Repo, rev string, f File, dst string) (string, error) {
	if err := repo.check(); err != nil {
		return "", err
	}
	u := c.FileURL(repo, rev, f.Path)
	resp, err := c.get(ctx, u)
	if err != nil {
		return "", fail(repo, rev, f.Path, u, resp, err)
	}
	defer resp.Body.Close()
	if f.Size >= 0 {
		fmt.Fprintf(c.log, "%s@%s: downloading %s (%d bytes)\n", repo, rev, f.Path, f.Size)
	} else {
		fmt.Fprintf(c.log, "%s@%s: downloading %s\n", repo, rev, f.Path)
	}
	sum, err := save(resp, f, dst)
	if err != nil {
		return "", fail(repo, rev, f.Path, u, resp, err)
	}
	return sum, nil
}

// maxUnlisted bounds a download whose size neither the listing nor the
// response gives.
const maxUnlisted = 64 << 30

// save streams the body to dst through a temporary file, checking it against
// f before the rename.
func save(resp *http.Response, f File, dst string) (string, error) {
	out, err := safefile.Create(dst)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTransfer, err)
	}
	defer out.Abort() // after Commit, a no-op
	sha := sha256.New()
	writers := []io.Writer{out, sha}
	var blob hash.Hash // git's sha1 of "blob SIZE\x00" + content
	if f.SHA256 == "" && f.OID != "" && f.Size >= 0 {
		blob = sha1.New()
		fmt.Fprintf(blob, "blob %d\x00", f.Size)
		writers = append(writers, blob)
	}
	want := f.Size
	if want < 0 {
		want = resp.ContentLength
	}
	// Never more than promised (one byte more shows the excess): a hub
	// that sends without end must not fill the disk.
	limit := int64(maxUnlisted)
	if want >= 0 {
		limit = want + 1
	}
	n, err := io.Copy(io.MultiWriter(writers...), io.LimitReader(resp.Body, limit))
	if err != nil {
		return "", fmt.Errorf("%w after %d bytes: %w", ErrTransfer, n, err)
	}
	if want < 0 && n == limit {
		return "", fmt.Errorf("%w: more than %d bytes of a file of unknown size", ErrIntegrity, int64(maxUnlisted))
	}
	sum := hex.EncodeToString(sha.Sum(nil))
	switch {
	case want >= 0 && n != want:
		return "", fmt.Errorf("%w: got %d bytes, want %d", ErrIntegrity, n, want)
	case f.SHA256 != "" && sum != f.SHA256:
		return "", fmt.Errorf("%w: sha256 %s, want %s", ErrIntegrity, sum, f.SHA256)
	case blob != nil && hex.EncodeToString(blob.Sum(nil)) != f.OID:
		return "", fmt.Errorf("%w: git blob id %s, want %s", ErrIntegrity, hex.EncodeToString(blob.Sum(nil)), f.OID)
	}
	if err := out.Commit(); err != nil {
		return "", fmt.Errorf("%w: %w", ErrTransfer, err)
	}
	return sum, nil
}
