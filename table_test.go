package msrag

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestChunkTableRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w100.chunks.parquet")
	want := &chunkTable{}
	for i := 0; i < 1000; i++ {
		want.add(int32(i/3), int32(i*7), int32(i*7+5), int64(i*40), int64(i*40+33))
	}
	if err := writeChunkTable(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := readChunkTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("chunk table round trip differs")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("left files behind: %v", entries)
	}
}

func TestDocTableRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.parquet")
	ids := []string{"a", "b", "ü/ß", ""}
	titles := []string{"", "T", "title", "x"}
	if err := writeDocTable(path, ids, titles); err != nil {
		t.Fatal(err)
	}
	gi, gt, err := readDocTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gi, ids) || !reflect.DeepEqual(gt, titles) {
		t.Fatalf("got %q %q", gi, gt)
	}
}

func TestReadCorruptTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.parquet")
	os.WriteFile(path, []byte("PAR1 not really"), 0o644)
	if _, _, err := readDocTable(path); err == nil {
		t.Fatal("corrupt parquet: no error")
	}
}
