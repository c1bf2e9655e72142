package hubserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a [Server]. The zero value serves nothing: Root is
// required.
type Config struct {
	// Root is the directory laid out as the package documentation says.
	Root string
	// Token, when set, is the bearer token every request must carry.
	Token string
}

// Server answers the hub's routes from Config.Root. It is safe for
// concurrent use.
type Server struct {
	cfg      Config
	requests atomic.Int64
	mu       sync.Mutex
	hashes   map[string]fileHash // by path on disk
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	return &Server{cfg: cfg, hashes: map[string]fileHash{}}
}

// hubError is an answer other than 200, as the hub words it.
type hubError struct {
	status int
	code   string // X-Error-Code
	msg    string
}

func (e *hubError) Error() string { return e.msg }

func notFound(code, format string, args ...any) *hubError {
	return &hubError{http.StatusNotFound, code, fmt.Sprintf(format, args...)}
}

// Requests returns how many requests the server has been sent.
func (s *Server) Requests() int64 { return s.requests.Load() }

// ServeHTTP checks the token and routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.cfg.Token != "" && r.Header.Get("Authorization") != "Bearer "+s.cfg.Token {
		writeError(w, &hubError{http.StatusUnauthorized, "", "Invalid credentials in Authorization header"})
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, &hubError{http.StatusMethodNotAllowed, "", r.Method + " is not served"})
		return
	}
	p := r.URL.Path
	if !cleanPath(p) {
		writeError(w, &hubError{http.StatusBadRequest, "", "bad path " + p})
		return
	}
	var err error
	switch {
	case strings.HasPrefix(p, "/api/"):
		err = s.api(w, r, strings.TrimPrefix(p, "/api/"))
	case strings.HasPrefix(p, "/files/"):
		err = s.serveFile(w, r, filepath.Join(s.cfg.Root, "files", filepath.FromSlash(strings.TrimPrefix(p, "/files/"))), "")
	default:
		err = s.resolve(w, r, strings.TrimPrefix(p, "/"))
	}
	if err != nil {
		writeError(w, err)
	}
}

// cleanPath reports a path without empty-named tricks: no "." or ".." segment
// and no backslash.
func cleanPath(p string) bool {
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return !strings.Contains(p, "\\")
}

// writeError writes err as the hub does: a status, X-Error-Code and
// X-Error-Message, and {"error": message}.
func writeError(w http.ResponseWriter, err error) {
	he, ok := err.(*hubError)
	if !ok {
		he = &hubError{http.StatusInternalServerError, "", err.Error()}
	}
	if he.code != "" {
		w.Header().Set("X-Error-Code", he.code)
	}
	w.Header().Set("X-Error-Message", he.msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(he.status)
	json.NewEncoder(w).Encode(map[string]string{"error": he.msg})
}

// repo is one repository revision found on disk.
type repo struct {
	kind   string // "datasets" or "models"
	id     string // ORG/NAME
	dir    string // ROOT/KIND/ORG/NAME
	commit string
}

// tree is the directory of the revision's files.
func (rp repo) tree() string { return filepath.Join(rp.dir, rp.commit) }

// find returns the repository kind/org/name at rev (a commit, or a name
// under refs/).
func (s *Server) find(kind, org, name, rev string) (repo, error) {
	rp := repo{kind: kind, id: org + "/" + name, dir: filepath.Join(s.cfg.Root, kind, org, name)}
	if st, err := os.Stat(rp.dir); err != nil || !st.IsDir() {
		return rp, notFound("RepoNotFound", "Repository %s not found", rp.id)
	}
	if isCommit(rev) {
		if st, err := os.Stat(filepath.Join(rp.dir, rev)); err == nil && st.IsDir() {
			rp.commit = rev
			return rp, nil
		}
	} else if rev != "" && !strings.Contains(rev, "/") {
		data, err := os.ReadFile(filepath.Join(rp.dir, "refs", rev))
		if c := strings.TrimSpace(string(data)); err == nil && isCommit(c) {
			rp.commit = c
			return rp, nil
		}
	}
	return rp, notFound("RevisionNotFound", "Invalid rev id: %s", rev)
}

// isCommit reports 40 lower-case hex digits.
func isCommit(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// resolve serves KIND-less or datasets/ ORG/NAME/resolve/REV/PATH.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request, p string) error {
	kind := "models"
	if rest, ok := strings.CutPrefix(p, "datasets/"); ok {
		kind, p = "datasets", rest
	}
	parts := strings.SplitN(p, "/", 5) // ORG NAME resolve REV PATH
	if len(parts) != 5 || parts[2] != "resolve" || parts[4] == "" {
		return notFound("", "no route for /%s", p)
	}
	rp, err := s.find(kind, parts[0], parts[1], parts[3])
	if err != nil {
		return err
	}
	w.Header().Set("X-Repo-Commit", rp.commit)
	return s.serveFile(w, r, filepath.Join(rp.tree(), filepath.FromSlash(parts[4])), rp.tree())
}

// serveFile serves the file at disk (ranges and HEAD included), with an ETag
// when it belongs to a repository revision (tree is then its top).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, disk, tree string) error {
	f, err := os.Open(disk)
	if err != nil {
		return notFound("EntryNotFound", "%s does not exist", path.Base(filepath.ToSlash(disk)))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return notFound("EntryNotFound", "%s is not a file", path.Base(filepath.ToSlash(disk)))
	}
	if tree != "" {
		rel, _ := filepath.Rel(tree, disk)
		e, err := s.entry(tree, filepath.ToSlash(rel), st)
		if err != nil {
			return err
		}
		etag := e.OID
		if e.LFS != nil {
			etag = e.LFS.OID
		}
		w.Header().Set("ETag", `"`+etag+`"`)
	}
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}
