package hubserve

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// api serves {datasets,models}/ORG/NAME/{revision,tree}/REV[/DIR].
func (s *Server) api(w http.ResponseWriter, r *http.Request, p string) error {
	parts := strings.SplitN(p, "/", 6) // KIND ORG NAME VERB REV [DIR]
	if len(parts) < 5 || (parts[0] != "datasets" && parts[0] != "models") {
		return notFound("", "no route for /api/%s", p)
	}
	rp, err := s.find(parts[0], parts[1], parts[2], parts[4])
	if err != nil {
		return err
	}
	var answer any
	switch {
	case parts[3] == "revision" && len(parts) == 5:
		answer, err = s.info(rp)
	case parts[3] == "tree":
		dir := ""
		if len(parts) == 6 {
			dir = strings.Trim(parts[5], "/")
		}
		answer, err = s.list(rp, dir, r.URL.Query().Get("recursive") == "true")
	default:
		return notFound("", "no route for /api/%s", p)
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(answer)
}

// sibling is one file in the revision API's answer.
type sibling struct {
	RFilename string `json:"rfilename"`
}

// info is the revision API's answer: the repository, its commit and files.
func (s *Server) info(rp repo) (any, error) {
	entries, err := s.list(rp, "", true)
	if err != nil {
		return nil, err
	}
	siblings := []sibling{}
	for _, e := range entries {
		if e.Type == "file" {
			siblings = append(siblings, sibling{e.Path})
		}
	}
	return map[string]any{"id": rp.id, "sha": rp.commit, "siblings": siblings}, nil
}

// Entry is one entry of the tree API's answer.
type Entry struct {
	Type string    `json:"type"` // "file" or "directory"
	OID  string    `json:"oid"`  // git blob id (of the LFS pointer for an LFS file); tree id of a directory
	Size int64     `json:"size"`
	Path string    `json:"path"`
	LFS  *LFSEntry `json:"lfs,omitempty"`
}

// LFSEntry is what the tree API says of a file stored with Git LFS.
type LFSEntry struct {
	OID         string `json:"oid"` // sha256 of the content
	Size        int64  `json:"size"`
	PointerSize int    `json:"pointerSize"`
}

// list returns the entries of dir (slash-separated, "" for the top) of the
// revision: its own entries, or everything below it when recursive. Files
// and directories are sorted by path.
func (s *Server) list(rp repo, dir string, recursive bool) ([]Entry, error) {
	top := rp.tree()
	start := filepath.Join(top, filepath.FromSlash(dir))
	if st, err := os.Stat(start); err != nil || !st.IsDir() {
		return nil, notFound("EntryNotFound", "%s does not exist in %s", dir, rp.id)
	}
	entries := []Entry{}
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == start {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			entries = append(entries, Entry{Type: "directory", OID: treeID(rel), Path: rel})
			if !recursive {
				return fs.SkipDir
			}
			return nil
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		e, err := s.entry(top, rel, st)
		if err != nil {
			return err
		}
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return entries, nil
}

// treeID stands for a directory's git tree id: the listing's "oid" of a
// directory, which no client checks.
func treeID(rel string) string { return gitBlobID([]byte("tree " + rel)) }

// entry describes the file rel of the revision whose files are in top.
func (s *Server) entry(top, rel string, st fs.FileInfo) (Entry, error) {
	h, err := s.hash(filepath.Join(top, filepath.FromSlash(rel)), st)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Type: "file", OID: h.blob, Size: st.Size(), Path: rel}
	if s.isLFS(top, rel) {
		ptr := lfsPointer(h.sha256, st.Size())
		e.OID = gitBlobID(ptr)
		e.LFS = &LFSEntry{OID: h.sha256, Size: st.Size(), PointerSize: len(ptr)}
	}
	return e, nil
}

// isLFS reports whether the .gitattributes at top marks rel filter=lfs.
func (s *Server) isLFS(top, rel string) bool {
	data, err := os.ReadFile(filepath.Join(top, ".gitattributes"))
	if err != nil {
		return false
	}
	lfs := false
	for line := range strings.SplitSeq(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		for _, attr := range fields[1:] {
			switch attr {
			case "filter=lfs":
				if matchAttr(fields[0], rel) {
					lfs = true // later lines win, as in git
				}
			case "-filter", "!filter":
				if matchAttr(fields[0], rel) {
					lfs = false
				}
			}
		}
	}
	return lfs
}

// matchAttr matches a .gitattributes pattern against a slash-separated path:
// a pattern without a slash against the file name, else against the whole
// path, where "**/" stands for any number of directories and "/**" for
// everything below.
func matchAttr(pattern, rel string) bool {
	pattern = strings.TrimPrefix(pattern, "/")
	if !strings.Contains(pattern, "/") {
		ok, _ := path.Match(pattern, path.Base(rel))
		return ok
	}
	var re strings.Builder
	re.WriteString("^")
	for i := 0; i < len(pattern); i++ {
		switch rest := pattern[i:]; {
		case strings.HasPrefix(rest, "**/"):
			re.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(rest, "**"):
			re.WriteString(".*")
			i++
		case rest[0] == '*':
			re.WriteString("[^/]*")
		case rest[0] == '?':
			re.WriteString("[^/]")
		case rest[0] == '[' && strings.Contains(rest, "]"):
			end := strings.Index(rest, "]")
			re.WriteString(rest[:end+1])
			i += end
		default:
			re.WriteString(regexp.QuoteMeta(rest[:1]))
		}
	}
	re.WriteString("$")
	m, err := regexp.Compile(re.String())
	return err == nil && m.MatchString(rel)
}
