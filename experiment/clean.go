package experiment

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/report"
)

// cleanOut makes out hold no file of an earlier evaluation before this one
// writes there: it removes the files the results.json in out lists (those
// whose sha256 is still the one listed: a file changed since is not the
// run's), the directories their removal leaves empty (the mteb/ tree of
// another model's names) and results.json itself. Any other file under out
// but the index (index, and its lock) is left alone and named on log.
func cleanOut(out, index string, log io.Writer) error {
	if _, err := os.Stat(out); errors.Is(err, fs.ErrNotExist) {
		return nil // a new directory
	}
	results := filepath.Join(out, "results.json")
	listed, err := listedFiles(results)
	if err != nil {
		fmt.Fprintf(log, "eval: %v: leaving the files of the earlier run in %s as they are\n", err, out)
	}
	var dirs []string
	for _, f := range listed {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) {
			continue
		}
		p := filepath.Join(out, rel)
		if sum, err := safefile.SHA256(p); err != nil || sum != f.SHA256 {
			continue // gone, or not the file the run wrote
		}
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("experiment: removing %s of the earlier run: %w", p, err)
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	if err := removeFile(results); err != nil {
		return err
	}
	pruneDirs(out, dirs)
	if others := otherFiles(out, index); len(others) > 0 {
		fmt.Fprintf(log, "eval: %s holds %d file(s) no earlier run listed, left as they are: %s\n", out, len(others), nameSome(others, 5))
	}
	return nil
}

// listedFiles returns the files the results.json at path lists; none when
// there is no results.json.
func listedFiles(path string) ([]report.OutputFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e struct {
		Files []report.OutputFile `json:"files"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s is not an evaluation's results.json (%w)", path, err)
	}
	return e.Files, nil
}

// pruneDirs removes the directories of dirs, and their parents below out,
// that are empty.
func pruneDirs(out string, dirs []string) {
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) }) // deepest first
	for _, d := range slices.Compact(dirs) {
		for d != out && strings.HasPrefix(d, out+string(filepath.Separator)) {
			if os.Remove(d) != nil { // not empty
				break
			}
			d = filepath.Dir(d)
		}
	}
}

// otherFiles lists the files under out, relative to it, but the index
// directory (and its lock beside it) and results.json.
func otherFiles(out, index string) []string {
	var names []string
	lock := filepath.Join(filepath.Dir(index), "."+filepath.Base(index)+".lock")
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case p == index && d.IsDir():
			return filepath.SkipDir
		case d.IsDir() || p == lock:
			return nil
		}
		rel, _ := filepath.Rel(out, p)
		names = append(names, filepath.ToSlash(rel))
		return nil
	})
	return names
}

// nameSome joins up to n names and says how many more there are.
func nameSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
