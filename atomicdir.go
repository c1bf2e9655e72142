package msrag

import (
	"fmt"
	"os"
	"path/filepath"
)

// tempSuffix marks the temporary sibling an index is written into before it is
// renamed into place. Leftovers from a killed build carry it and are removed by
// the next build of the same directory.
const tempSuffix = ".msrag-tmp-"

// stageDir creates an empty temporary sibling of dir (same parent, so the final
// rename stays on one file system) and removes leftovers of earlier builds of dir
// that were killed before they finished.
func stageDir(dir string) (string, error) {
	dir = filepath.Clean(dir)
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("msrag: creating %s: %w", parent, err)
	}
	old, _ := filepath.Glob(filepath.Join(parent, "."+base+tempSuffix+"*"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+tempSuffix)
	if err != nil {
		return "", fmt.Errorf("msrag: creating a temporary directory beside %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("msrag: %w", err)
	}
	return tmp, nil
}

// publishDir moves the complete index in tmp to dir. A previous index in dir is
// moved aside first and removed only after the new one is in place, so at every
// moment dir holds either the previous complete index or the new one (between the
// two renames it holds none, and the previous one is still whole beside it).
func publishDir(tmp, dir string) error {
	dir = filepath.Clean(dir)
	if err := syncDir(tmp); err != nil {
		return err
	}
	var aside string
	if _, err := os.Stat(dir); err == nil {
		if !isIndexDir(dir) {
			return fmt.Errorf("msrag: %s exists and is not an msrag index; refusing to replace it", dir)
		}
		aside = tmp + ".old"
		if err := os.Rename(dir, aside); err != nil {
			return fmt.Errorf("msrag: moving the previous index aside: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if aside != "" {
			os.Rename(aside, dir)
		}
		return fmt.Errorf("msrag: moving the new index into place: %w", err)
	}
	if aside != "" {
		os.RemoveAll(aside)
	}
	return syncDir(filepath.Dir(dir))
}

// isIndexDir reports whether dir looks like an index: an empty directory or one
// with a manifest.
func isIndexDir(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, manifestName)); err == nil {
		return true
	}
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("msrag: syncing %s: %w", dir, err)
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees a half-written file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return fmt.Errorf("msrag: %w", err)
	}
	tmp := f.Name()
	werr := f.Chmod(0o644)
	if werr == nil {
		_, werr = f.Write(data)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("msrag: writing %s: %w", path, werr)
	}
	return nil
}
