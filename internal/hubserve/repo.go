package hubserve

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Kind is the kind of a repository, the directory of ROOT it lives in.
type Kind string

// The kinds of repository the server holds.
const (
	Datasets Kind = "datasets"
	Models   Kind = "models"
)

// A File is one file of a repository revision for [AddRepo]: Data, or, when
// From is set, the file on disk at From.
type File struct {
	Data []byte
	From string
}

// FilesIn returns every file below dir by its slash-separated path, each
// taken From its place on disk; files and directories whose names start with
// a dot are left out (a cache's stamps, not part of what it holds).
func FilesIn(dir string) (map[string]File, error) {
	files := map[string]File{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = File{From: p}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hubserve: %w", err)
	}
	return files, nil
}

// AddRepo lays out revision commit (40 lower-case hex digits) of the
// repository id (ORG/NAME) of kind under root, as the package documentation
// says, and points refs/main at it. A File From disk is hard-linked where the
// file system allows (the server never writes) and copied where not; a
// revision already there is refused.
func AddRepo(root string, kind Kind, id, commit string, files map[string]File) error {
	org, name, ok := strings.Cut(id, "/")
	if (kind != Datasets && kind != Models) || !ok || !validSegment(org) || !validSegment(name) || !isCommit(commit) {
		return fmt.Errorf("hubserve: repository %s %q at %q: want datasets or models, ORG/NAME and a 40-digit commit", kind, id, commit)
	}
	dir := filepath.Join(root, string(kind), org, name)
	tree := filepath.Join(dir, commit)
	if _, err := os.Stat(tree); err == nil {
		return fmt.Errorf("hubserve: %s holds %s at %s already", root, id, commit)
	}
	for p := range files {
		if !validPath(p) {
			return fmt.Errorf("hubserve: %s: %q is no path inside a repository", id, p)
		}
	}
	for p, f := range files {
		if err := putFile(filepath.Join(tree, filepath.FromSlash(p)), f); err != nil {
			return fmt.Errorf("hubserve: %s: %s: %w", id, p, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "refs"), 0o755); err != nil {
		return fmt.Errorf("hubserve: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "refs", "main"), []byte(commit+"\n"), 0o644)
}

// validSegment reports a name usable as one path segment.
func validSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`)
}

// validPath reports a relative slash-separated path that stays inside the
// repository.
func validPath(p string) bool {
	return p != "" && !strings.Contains(p, `\`) && path.Clean(p) == p && !path.IsAbs(p) && p != ".." && !strings.HasPrefix(p, "../")
}

// putFile writes f at dst.
func putFile(dst string, f File) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if f.From == "" {
		return os.WriteFile(dst, f.Data, 0o644)
	}
	if os.Link(f.From, dst) == nil {
		return nil
	}
	in, err := os.Open(f.From)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
