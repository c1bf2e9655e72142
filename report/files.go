package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/msrag/msrag/internal/safefile"
)

// OutputFile is a file an evaluation wrote, by its path relative to the
// output directory (slash-separated), with its sha256.
type OutputFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// ErrOtherRun is wrapped by ReadFile's error when a file results.json lists
// is not the one the run wrote: the directory holds files of another run
// (an evaluation stopped while it wrote, or two writing into it at once).
var ErrOtherRun = errors.New("the output directory holds files of another run: run the evaluation again")

// OutputFiles hashes the files at paths, which lie under dir, for
// Eval.Files.
func OutputFiles(dir string, paths []string) ([]OutputFile, error) {
	out := make([]OutputFile, 0, len(paths))
	for _, p := range paths {
		rel, err := filepath.Rel(dir, p)
		if err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("report: %s is not under %s", p, dir)
		}
		sum, err := safefile.SHA256(p)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		out = append(out, OutputFile{Path: filepath.ToSlash(rel), SHA256: sum})
	}
	return out, nil
}

// checkFiles checks the files results (the path of a results.json) lists
// that lie beside it.
func checkFiles(results string, files []OutputFile) error {
	dir := filepath.Dir(results)
	for _, f := range files {
		rel := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: files: %q is not a path inside its directory", results, f.Path)
		}
		p := filepath.Join(dir, rel)
		sum, err := safefile.SHA256(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%s: %s has sha256 %.12s..., the run wrote %.12s...: %w", results, p, sum, f.SHA256, ErrOtherRun)
		}
	}
	return nil
}
