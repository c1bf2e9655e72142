package safefile_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/internal/safefile"
)

// TestRemoveTemps checks that RemoveTemps removes what a writer killed
// before Commit leaves of a file, and nothing else: not the file, not
// another file's temporaries.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00001.arrow")
	if err := safefile.WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path, filepath.Join(dir, "00001.arrow2"), filepath.Join(dir, "00011.arrow")} {
		f, err := safefile.Create(p) // never committed: its writer was killed
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte("part"))
	}
	if err := safefile.RemoveTemps(path); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries(t, dir) {
		if m, _ := filepath.Match(".0*.tmp-*", e); m {
			e = e[:len(e)-len(filepath.Ext(e))] // less ".tmp-RANDOM"
		}
		left = append(left, e)
	}
	want := []string{".00001.arrow2", ".00011.arrow", "00001.arrow"}
	slices.Sort(left)
	if !slices.Equal(left, want) {
		t.Errorf("left %v, want %v", left, want)
	}
	if err := safefile.RemoveTemps(filepath.Join(dir, "absent", "x")); err != nil {
		t.Errorf("a missing directory: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("the file holds %q", data)
	}
}
