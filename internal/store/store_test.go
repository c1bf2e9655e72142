package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/safefile"
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
	v1 := `{"format_version": 1, "model": {"name": "m", "dims": 4}, "docs_file": "docs.parquet", "windows": [
	  {"size": 100, "stride": 100, "vectors": 3, "index_file": "w100.faiss", "chunks_file": "w100.chunks.parquet"},
	  {"size": 507, "full": true, "stride": 0, "vectors": 2, "index_file": "full.faiss", "chunks_file": "full.chunks.parquet"}]}`
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(v1), 0o644)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Windows[0].Truncate || !m.Windows[1].Truncate || m.Windows[1].Size != 507 {
		t.Errorf("windows %+v: want w100 sliding, 507 truncated", m.Windows)
	}
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(`{"format_version": 6, "windows": [{"size": 1}]}`), 0o644)
	if _, err := ReadManifest(dir); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "format version 6, this msrag reads 1 to 5") {
		t.Errorf("format 6: %v", err)
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
	m := &Manifest{FormatVersion: FormatVersion, Model: ModelInfo{Dims: 4}, DocsFile: "docs.parquet", DocsSHA256: sum,
		Windows: []WindowInfo{{Size: 1, IndexFile: "w1.faiss", ChunksFile: "w1.chunks.parquet"}}}
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

// TestStageStopsWhenCancelled: once the Stage's context ends, a file being
// written stops at the next piece, even inside one large write (a FAISS
// index hands over its vectors in one), and nothing is published.
func TestStageStopsWhenCancelled(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "idx")
	ctx, cancel := context.WithCancel(context.Background())
	s, err := NewStage(ctx, dir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Abort()
	big := make([]byte, 4*writePiece)
	written := 0
	_, err = s.Create("w1.faiss", func(w io.Writer) error {
		w.Write([]byte("head"))
		cancel()
		n, err := w.Write(big)
		written = n
		return err
	})
	if !errors.Is(err, context.Canceled) || written != 0 {
		t.Fatalf("Create after the cancel: %v, %d bytes of a large write written; want context.Canceled before the first piece", err, written)
	}
	if err := s.Publish(&Manifest{FormatVersion: FormatVersion}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Publish after the cancel: %v, want context.Canceled", err)
	}
	if names := dirNames(t, root); len(names) != 0 {
		t.Errorf("left after a cancelled stage: %v", names)
	}
}

// TestCtxWriterPieces: a large write goes through in pieces of writePiece
// bytes, all of it while the context lasts.
func TestCtxWriterPieces(t *testing.T) {
	var sizes []int
	w := ctxWriter{ctx: context.Background(), w: writerFunc(func(p []byte) (int, error) { sizes = append(sizes, len(p)); return len(p), nil })}
	n, err := w.Write(make([]byte, 2*writePiece+1))
	if err != nil || n != 2*writePiece+1 || !reflect.DeepEqual(sizes, []int{writePiece, writePiece, 1}) {
		t.Fatalf("Write = %d, %v in pieces %v", n, err, sizes)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestStageRefusesNonIndex checks that a directory that is not an index (a
// file, a link, a directory of other files) is refused by NewStage, before
// any work, with the reason, and the lock released; and by Publish when it
// became one during the build. Before, only Publish refused it, after the
// whole build, saying "exists and may not be replaced" and no more.
func TestStageRefusesNonIndex(t *testing.T) {
	root := t.TempDir()
	mine := filepath.Join(root, "mine")
	os.Mkdir(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("x"), 0o644)
	file := filepath.Join(root, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	link := filepath.Join(root, "link")
	os.Symlink(mine, link)
	for dir, why := range map[string]string{mine: "holds 1 entries (such as notes.txt) and no manifest.json: it is not an index",
		file: "is a regular file, not an index directory", link: "is a symbolic link (to " + mine + ")"} {
		_, err := NewStage(context.Background(), dir, nil, false)
		if !errors.Is(err, safefile.ErrNotReplaceable) || !strings.Contains(err.Error(), why) {
			t.Errorf("NewStage(%s): %v, want %q", dir, err, why)
		}
		l, err := LockDir(context.Background(), dir, false)
		if err != nil {
			t.Fatalf("the lock of %s was kept: %v", dir, err)
		}
		l.Unlock()
	}
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	s, err := NewStage(context.Background(), empty, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o644) // during the build
	if err := s.Publish(&Manifest{}); !errors.Is(err, safefile.ErrNotReplaceable) || !strings.Contains(err.Error(), "it is not an index") {
		t.Errorf("publishing over a directory that is not an index: %v", err)
	}
	for _, f := range []string{filepath.Join(mine, "notes.txt"), filepath.Join(empty, "notes.txt"), file} {
		if b, _ := os.ReadFile(f); string(b) != "x" {
			t.Errorf("%s was changed", f)
		}
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

// TestReadManifestRefusesDamage: every field an index is opened with is
// checked at load, naming the field; file names must stay inside the index
// directory.
func TestReadManifestRefusesDamage(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{"format_version": FormatVersion, "model": map[string]any{"name": "m", "dims": 4}, "docs": 3,
			"docs_file": "docs.parquet", "windows": []any{
				map[string]any{"size": 4, "stride": 4, "vectors": 3, "index_file": "w4.faiss", "chunks_file": "w4.chunks.parquet"}}}
	}
	win := func(m map[string]any) map[string]any { return m["windows"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"dims zero", func(m map[string]any) { m["model"].(map[string]any)["dims"] = 0 }, "model.dims 0"},
		{"dims huge", func(m map[string]any) { m["model"].(map[string]any)["dims"] = 1 << 40 }, "model.dims 1099511627776"},
		{"docs negative", func(m map[string]any) { m["docs"] = -1 }, "docs -1 is negative"},
		{"origin without a kind", func(m map[string]any) {
			m["model"].(map[string]any)["origin"] = map[string]any{"params": map[string]any{"model": "m"}}
		}, "model.origin has parameters but no kind"},
		{"docs file absolute", func(m map[string]any) { m["docs_file"] = "/etc/passwd" }, `docs_file "/etc/passwd"`},
		{"docs file up", func(m map[string]any) { m["docs_file"] = "../other/docs.parquet" }, `docs_file "../other/docs.parquet"`},
		{"docs file dotdot", func(m map[string]any) { m["docs_file"] = ".." }, `docs_file ".."`},
		{"index file in a subdirectory", func(m map[string]any) { win(m)["index_file"] = "a/w4.faiss" }, `windows[0].index_file "a/w4.faiss"`},
		{"chunks file with a newline", func(m map[string]any) { win(m)["chunks_file"] = "w4\n.parquet" }, "windows[0].chunks_file"},
		{"same file twice", func(m map[string]any) { win(m)["chunks_file"] = "docs.parquet" }, "also docs_file"},
		{"window size zero", func(m map[string]any) { win(m)["size"] = 0 }, "windows[0]: size 0"},
		{"stride negative", func(m map[string]any) { win(m)["stride"] = -2 }, "windows[0]: stride -2"},
		{"vectors negative", func(m map[string]any) { win(m)["vectors"] = -5 }, "windows[0]: vectors -5"},
		{"late overlap too big", func(m map[string]any) {
			m["late"] = map[string]any{"segment_tokens": 8, "sequence_tokens": 10, "overlap": 8}
		}, "late: segment_tokens 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := good()
			tc.edit(m)
			data, _ := json.Marshal(m)
			os.WriteFile(filepath.Join(dir, ManifestName), data, 0o644)
			_, err := ReadManifest(dir)
			if !errors.Is(err, ErrBadManifest) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want ErrBadManifest naming %s and %q", err, dir, tc.want)
			}
		})
	}
	dir := t.TempDir()
	data, _ := json.Marshal(good())
	os.WriteFile(filepath.Join(dir, ManifestName), data, 0o644)
	if _, err := ReadManifest(dir); err != nil {
		t.Fatalf("the valid manifest: %v", err)
	}
}
