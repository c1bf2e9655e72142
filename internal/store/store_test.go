package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestChunkTableRoundTrip(t *testing.T) {
	want := &ChunkTable{}
	for i := range 1000 {
		want.Add(int32(i/3), int32(i*7), int32(i*7+5), int64(i*40), int64(i*40+33))
	}
	var b bytes.Buffer
	if err := WriteChunkTable(&b, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadChunkTable(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("chunk table round trip differs")
	}
}

func TestDocTableRoundTrip(t *testing.T) {
	ids := []string{"a", "b", "ü/ß", ""}
	titles := []string{"", "T", "title", "x"}
	var b bytes.Buffer
	if err := WriteDocTable(&b, ids, titles); err != nil {
		t.Fatal(err)
	}
	gi, gt, err := ReadDocTable(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gi, ids) || !reflect.DeepEqual(gt, titles) {
		t.Fatalf("got %q %q", gi, gt)
	}
	if _, _, err := ReadDocTable([]byte("PAR1 not really")); err == nil {
		t.Fatal("corrupt parquet: no error")
	}
	var c bytes.Buffer
	WriteChunkTable(&c, &ChunkTable{})
	if _, _, err := ReadDocTable(c.Bytes()); !errors.Is(err, ErrMismatch) {
		t.Errorf("a chunk table read as the document table: %v, want ErrMismatch", err)
	}
}

// TestReadManifestVersion1 reads a format 1 manifest: its "full" window is
// the Truncate window.
func TestReadManifestVersion1(t *testing.T) {
	dir := t.TempDir()
	v1 := `{"format_version": 1, "model": {"name": "m", "dims": 4}, "windows": [
	  {"size": 100, "stride": 100, "vectors": 3, "index_file": "w100.faiss"},
	  {"size": 507, "full": true, "stride": 0, "vectors": 2, "index_file": "full.faiss"}]}`
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(v1), 0o644)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Windows[0].Truncate || !m.Windows[1].Truncate || m.Windows[1].Size != 507 {
		t.Errorf("windows %+v: want w100 sliding, 507 truncated", m.Windows)
	}
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"format_version": 4, "windows": [{"size": 1}]}`), 0o644)
	if _, err := ReadManifest(dir); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "format version 4") {
		t.Errorf("format 4: %v", err)
	}
}

func TestStagePublishAndAbort(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "idx")
	// A leftover of a killed build.
	os.Mkdir(filepath.Join(root, ".idx"+stagingMark+"dead"), 0o755)
	s, err := NewStage(context.Background(), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.Create("docs.parquet", func(w io.Writer) error { return WriteDocTable(w, []string{"a"}, []string{""}) })
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{FormatVersion: FormatVersion, DocsFile: "docs.parquet", DocsSHA256: sum, Windows: []WindowInfo{{Size: 1}}}
	if err := s.Publish(m); err != nil {
		t.Fatal(err)
	}
	var data []byte
	if err := ReadFile(dir, "docs.parquet", sum, ReadAll(&data)); err != nil {
		t.Fatal(err)
	}
	if err := ReadFile(dir, "docs.parquet", strings.Repeat("0", 64), ReadAll(&data)); !errors.Is(err, ErrMismatch) {
		t.Errorf("wrong checksum: %v, want ErrMismatch", err)
	}
	s2, err := NewStage(context.Background(), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s2.Create("x", func(w io.Writer) error { return nil })
	s2.Abort()
	es, _ := os.ReadDir(root)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"idx"}) {
		t.Errorf("root holds %v, want the index only", names)
	}
	if _, err := ReadManifest(dir); err != nil {
		t.Errorf("published index after an aborted rebuild: %v", err)
	}
}

func TestStageRefusesNonIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mine")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	s, err := NewStage(context.Background(), dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(&Manifest{}); err == nil || !strings.Contains(err.Error(), "may not be replaced") {
		t.Errorf("publishing over a directory that is not an index: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "x" {
		t.Errorf("the directory was changed")
	}
}

func TestLockBusyAndWait(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	l, err := LockDir(context.Background(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(context.Background(), dir, false)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another build (pid ") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second lock: %v, want ErrBusy naming the pid and %s", err, dir)
	}
	if _, err := NewStage(context.Background(), dir, nil, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("stage while locked: %v, want ErrBusy", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := LockDir(ctx, dir, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting past the deadline: %v", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		l.Unlock()
	}()
	l2, err := LockDir(context.Background(), dir, true)
	if err != nil {
		t.Fatalf("waiting for the lock: %v", err)
	}
	l2.Unlock()
	l2.Unlock()
}
