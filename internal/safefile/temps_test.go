package safefile_test

import (
	"fmt"
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
	for i, p := range []string{path, path, filepath.Join(dir, "00001.arrow2"), filepath.Join(dir, "00011.arrow")} {
		// never committed: its writer was killed, and its lock ended
		temp := filepath.Join(filepath.Dir(p), fmt.Sprintf(".%s.tmp-%d", filepath.Base(p), 1000+i))
		if err := os.WriteFile(temp, []byte("part"), 0o644); err != nil {
			t.Fatal(err)
		}
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

// TestRemoveTempsKeepsLiveWriters checks that RemoveTemps leaves the
// temporary file of a writer at work (another run of the same task at the
// same time) and that the writer then commits: before, the writer's rename
// failed with "no such file or directory".
func TestRemoveTempsKeepsLiveWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00002.arrow")
	f, err := safefile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if err := safefile.RemoveTemps(path); err != nil {
		t.Fatal(err)
	}
	if n := entries(t, dir); len(n) != 1 {
		t.Fatalf("after RemoveTemps the directory holds %v, want the live writer's temporary file", n)
	}
	if err := f.Commit(); err != nil {
		t.Fatalf("the writer's Commit after another's RemoveTemps: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("the file holds %q", data)
	}
	g, err := safefile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	g.Abort()
	if err := safefile.RemoveTemps(path); err != nil {
		t.Fatal(err)
	}
	if n := entries(t, dir); !slices.Equal(n, []string{"00002.arrow"}) {
		t.Errorf("directory holds %v", n)
	}
}
