package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreadableSourceRecord checks that a corpus record beside an index
// that is there but cannot be read (here a directory where the file is
// expected: tests run as root, who reads any file) is an error naming it,
// not "no record": reuse, and whether the index may be rebuilt, are never
// decided on a record unread. No file at all is no record.
func TestUnreadableSourceRecord(t *testing.T) {
	ixDir := filepath.Join(t.TempDir(), "idx")
	if err := os.Mkdir(ixDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if rec, err := readSource(ixDir); rec != nil || err != nil {
		t.Fatalf("no record: %v, %v; want none and no error", rec, err)
	}
	if err := os.Mkdir(sidecarPath(ixDir), 0o755); err != nil {
		t.Fatal(err)
	}
	named := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), sidecarPath(ixDir)) {
			t.Errorf("%s with an unreadable record: %v, want an error naming %s", what, err, sidecarPath(ixDir))
		}
	}
	rec, err := readSource(ixDir)
	if rec != nil {
		t.Errorf("readSource: record %+v", rec)
	}
	named("readSource", err)
	_, err = rebuildable(ixDir)
	named("rebuildable", err)
	why, err := legacyDiffers(ixDir, sourceOf(filepath.Join(ixDir, "corpus.jsonl")))
	if why != "" {
		t.Errorf("legacyDiffers: %q, want no reason but the error", why)
	}
	named("legacyDiffers", err)
	named("checkLegacySource", checkLegacySource(ixDir, sourceOf(filepath.Join(ixDir, "corpus.jsonl"))))
}
