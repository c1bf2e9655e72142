package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFormatsAreComplete checks the registry: one row per name, every
// corpus format countable, every queries-only format readable as queries.
func TestFormatsAreComplete(t *testing.T) {
	seen := map[Format]bool{}
	for _, fm := range formats {
		if fm.name == FormatAuto || seen[fm.name] {
			t.Errorf("format %q is empty or registered twice", fm.name)
		}
		seen[fm.name] = true
		if (fm.open == nil) != (fm.units == nil) {
			t.Errorf("format %q: a corpus format needs both open and units", fm.name)
		}
		if fm.open == nil && fm.queries == nil {
			t.Errorf("format %q reads neither a corpus nor queries", fm.name)
		}
		if fm.magic != nil && len(fm.exts) > 0 && fm.notMagic == "" {
			t.Errorf("format %q: an extension without the magic needs a notMagic", fm.name)
		}
	}
	if got, want := readable(), ".parquet, .arrow, .arrows, .jsonl[.gz], a directory"; got != want {
		t.Errorf("readable() = %q, want %q", got, want)
	}
}

// TestDetect checks detection by magic bytes, extension and gzip content.
func TestDetect(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		file string
		data string
		want Format
	}{
		{"a.bin", "PAR1....", FormatParquet},
		{"a.jsonl", "ARROW1..", FormatArrowFile}, // the magic wins over the name
		{"a.bin", "\xff\xff\xff\xff....", FormatArrowStream},
		{"a.ndjson", `{"_id":"1"}`, FormatJSONL},
		{"a.JSONL.gz", "\x1f\x8b....", FormatJSONL},
		{"a.dat", "\x1f\x8b....", FormatJSONL},
		{"q.tsv", "1\tq", FormatTSV},
		{"q.md", "a query", FormatLines},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.file)
		if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, err := detect(path, FormatAuto); got != tt.want || err != nil {
			t.Errorf("detect(%s %q) = %q, %v; want %q", tt.file, tt.data, got, err, tt.want)
		}
	}
	if got, err := detect(dir, FormatAuto); got != FormatDir || err != nil {
		t.Errorf("detect(a directory without .parquet files) = %q, %v; want dir", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c-0.parquet"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := detect(dir, FormatAuto); got != FormatParquet || err != nil {
		t.Errorf("detect(a directory with a .parquet file) = %q, %v; want parquet", got, err)
	}
	if got, err := detect(dir, FormatDir); got != FormatDir || err != nil {
		t.Errorf("detect(a directory, forced dir) = %q, %v; want dir", got, err)
	}
	if _, err := detect(dir, FormatJSONL); err == nil {
		t.Error("a directory forced to JSONL: no error")
	}
}
