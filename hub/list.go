package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// File is one file of a repository as the hub lists it.
type File struct {
	// Path is the file's path in the repository, slash-separated.
	Path string
	// Size is the file's size in bytes; -1 when unknown (see [Unlisted]).
	Size int64
	// OID is the git blob id (sha1) of what git stores: the content itself,
	// or for an LFS file its pointer.
	OID string
	// SHA256 is the sha256 of the content of an LFS file (hex); "" for a
	// file stored in git itself.
	SHA256 string
}

// Unlisted returns a File known by its path alone, for [Client.Download]
// without a listing: only the Content-Length, if the hub sends one, is checked.
func Unlisted(path string) File { return File{Path: path, Size: -1} }

// treeEntry is one entry of the tree API's answer (huggingface_hub's RepoFile
// reads the same keys: path, size, oid, lfs{oid, size, pointerSize}).
type treeEntry struct {
	Type string `json:"type"`
	Path string `json:"path"`
	Size int64  `json:"size"`
	OID  string `json:"oid"`
	LFS  *struct {
		OID  string `json:"oid"`
		Size int64  `json:"size"`
	} `json:"lfs"`
}

// maxPages bounds a paginated listing, against a hub that links a page to itself.
const maxPages = 10000

// List returns every file of repo at rev, from the tree API:
// GET ENDPOINT/api/{models,datasets}/ORG/NAME/tree/REV?recursive=true,
// following the pages the hub links with a Link header (rel="next").
// Directories are left out.
func (c *Client) List(ctx context.Context, repo Repo, rev string) ([]File, error) {
	if err := repo.check(); err != nil {
		return nil, err
	}
	u := c.apiURL(repo, "tree", rev) + "?recursive=true"
	var files []File
	for range maxPages {
		page, next, err := c.listPage(ctx, repo, rev, u)
		if err != nil {
			return nil, err
		}
		files = append(files, page...)
		if next == "" {
			return files, nil
		}
		u = next
	}
	return nil, fail(repo, rev, "", u, nil, fmt.Errorf("%w: more than %d pages", ErrStatus, maxPages))
}

// listPage fetches one page of a listing and the URL of the next, if any.
func (c *Client) listPage(ctx context.Context, repo Repo, rev, u string) ([]File, string, error) {
	resp, err := c.get(ctx, u)
	if err != nil {
		return nil, "", fail(repo, rev, "", u, resp, err)
	}
	defer resp.Body.Close()
	var entries []treeEntry
	if err := json.NewDecoder(limited(resp.Body)).Decode(&entries); err != nil {
		return nil, "", fail(repo, rev, "", u, resp, fmt.Errorf("%w: decoding the listing: %w", ErrTransfer, err))
	}
	var files []File
	for _, e := range entries {
		if e.Type != "file" {
			continue
		}
		f := File{Path: e.Path, Size: e.Size, OID: e.OID}
		if e.LFS != nil {
			f.SHA256 = strings.ToLower(e.LFS.OID)
		}
		files = append(files, f)
	}
	next, err := nextPage(u, resp.Header)
	if err != nil {
		return nil, "", fail(repo, rev, "", u, resp, err)
	}
	return files, next, nil
}

// nextPage returns the absolute URL of the Link header's rel="next", or "".
func nextPage(current string, h http.Header) (string, error) {
	for _, v := range h.Values("Link") {
		for link := range strings.SplitSeq(v, ",") {
			target, params, ok := strings.Cut(link, ";")
			if !ok || !strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) {
				continue
			}
			target = strings.Trim(strings.TrimSpace(target), "<>")
			base, _ := url.Parse(current)
			ref, err := url.Parse(target)
			if err != nil {
				return "", fmt.Errorf("%w: bad next-page link %q", ErrStatus, target)
			}
			return base.ResolveReference(ref).String(), nil
		}
	}
	return "", nil
}

// Commit resolves rev (a branch, a tag or a commit) to the commit it names,
// with the revision API: GET ENDPOINT/api/{models,datasets}/ORG/NAME/revision/REV,
// whose answer's "sha" is the commit.
func (c *Client) Commit(ctx context.Context, repo Repo, rev string) (string, error) {
	if err := repo.check(); err != nil {
		return "", err
	}
	u := c.apiURL(repo, "revision", rev)
	resp, err := c.get(ctx, u)
	if err != nil {
		return "", fail(repo, rev, "", u, resp, err)
	}
	defer resp.Body.Close()
	var info struct {
		SHA string `json:"sha"`
	}
	if err := json.NewDecoder(limited(resp.Body)).Decode(&info); err != nil {
		return "", fail(repo, rev, "", u, resp, fmt.Errorf("%w: decoding the revision: %w", ErrTransfer, err))
	}
	if !isCommit(info.SHA) {
		return "", fail(repo, rev, "", u, resp, fmt.Errorf("%w: the answer has no commit sha", ErrStatus))
	}
	return info.SHA, nil
}

// apiURL returns ENDPOINT/api/{models,datasets}/ORG/NAME/VERB/REV.
func (c *Client) apiURL(repo Repo, verb, rev string) string {
	kind := "models/"
	if repo.Dataset {
		kind = ""
	}
	return c.endpoint + "/api/" + kind + repo.prefix() + "/" + verb + "/" + url.PathEscape(rev)
}

// IsCommit reports a full commit id: 40 lowercase hex digits.
func IsCommit(s string) bool { return isCommit(s) }

// isCommit reports a full hex commit id.
func isCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
