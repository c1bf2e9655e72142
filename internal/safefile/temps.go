package safefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RemoveTemps removes the temporary siblings of path that [Create] left
// when its writer was killed before Commit or Abort (".NAME.tmp-*"); a
// writer that ends in any other way leaves none. Call it only where no
// other writer of path can be at work: a rerun of the task that owns path.
func RemoveTemps(path string) error {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)+tempSuffix
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing temporary files of %s: %w", path, err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing a temporary file of %s: %w", path, err)
		}
	}
	return nil
}
