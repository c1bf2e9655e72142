package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/safefile"
)

// publishDocs publishes an index of the documents ids into dir through r.
func publishDocs(tb testing.TB, dir string, r safefile.Replacer, ids ...string) {
	tb.Helper()
	s, err := NewStage(context.Background(), dir, nil, false)
	if err != nil {
		tb.Fatal(err)
	}
	s.Replace = r
	sum, err := s.Create("docs.parquet", func(w io.Writer) error { return WriteDocTable(w, ids, make([]string, len(ids))) })
	if err != nil {
		tb.Fatal(err)
	}
	m := &Manifest{FormatVersion: FormatVersion, Model: ModelInfo{Dims: 4}, Docs: int64(len(ids)), DocsFile: "docs.parquet", DocsSHA256: sum,
		Windows: []WindowInfo{{Size: 1, IndexFile: "w1.faiss", ChunksFile: "w1.chunks.parquet"}}}
	if err := s.Publish(m); err != nil {
		tb.Fatal(err)
	}
}

// copyTree copies the directory src to dst, which must not exist.
func copyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.Mkdir(to, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// crashStates publishes an index of 2 documents over one of 1 in
// root/idx, through r, and returns copies of root as a crash before each
// step of the publish, and after the last, would leave it.
func crashStates(t *testing.T, r safefile.Replacer) map[string]string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	dir := filepath.Join(root, "idx")
	publishDocs(t, dir, safefile.Replacer{}, "a")
	states := map[string]string{}
	r.Step = func(st safefile.Step) {
		step := string(st)
		states[step] = filepath.Join(t.TempDir(), "root")
		copyTree(t, root, states[step])
	}
	publishDocs(t, dir, r, "a", "b")
	states["done"] = root
	return states
}

// failedRebuilds are the ways a rebuild after a crash fails: it takes the
// lock and stages, then stops (an error in the corpus), or its context ends
// while it writes.
var failedRebuilds = map[string]func(t *testing.T, dir string){
	"aborted": func(t *testing.T, dir string) {
		s, err := NewStage(context.Background(), dir, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		s.Create("docs.parquet", func(w io.Writer) error { return errors.New("line 301: malformed") })
		s.Abort()
	},
	"cancelled": func(t *testing.T, dir string) {
		ctx, cancel := context.WithCancel(context.Background())
		s, err := NewStage(ctx, dir, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := s.Create("docs.parquet", func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); !errors.Is(err, context.Canceled) {
			t.Fatalf("Create after the cancel: %v", err)
		}
		if err := s.Publish(&Manifest{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("Publish after the cancel: %v", err)
		}
	},
}

// TestCrashDuringPublishThenFailedRebuild: whichever step of a publish a
// crash stops, with the exchange or with the two renames, a rebuild that
// then fails leaves a complete index, the old or the new, and nothing
// beside it.
func TestCrashDuringPublishThenFailedRebuild(t *testing.T) {
	for _, mode := range []struct {
		name  string
		r     safefile.Replacer
		steps []string
	}{
		{"exchange", safefile.Replacer{}, []string{string(safefile.StepExchange), string(safefile.StepRemove), "done"}},
		{"two renames", safefile.Replacer{NoExchange: true}, []string{string(safefile.StepAside), string(safefile.StepInPlace), string(safefile.StepRemove), "done"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			states := crashStates(t, mode.r)
			if len(states) != len(mode.steps) {
				t.Fatalf("publish stopped before %d steps, want %v", len(states), mode.steps)
			}
			for _, step := range mode.steps {
				for name, rebuild := range failedRebuilds {
					t.Run(step+"/"+name, func(t *testing.T) {
						root := filepath.Join(t.TempDir(), "root")
						copyTree(t, states[step], root)
						dir := filepath.Join(root, "idx")
						rebuild(t, dir)
						m, err := ReadManifest(dir)
						if err != nil {
							t.Fatalf("no index after a crash before %q and a failed rebuild: %v", step, err)
						}
						if m.Docs != 1 && m.Docs != 2 {
							t.Errorf("index of %d documents", m.Docs)
						}
						if names := dirNames(t, root); !reflect.DeepEqual(names, []string{"idx"}) {
							t.Errorf("root holds %v, want the index only", names)
						}
					})
				}
			}
		})
	}
}

// TestReaderRestoresIndexLeftAside: a reader that finds the index missing
// and a copy of it aside puts it back, waiting while a build holds the
// lock (that build is between the two renames of its publish).
func TestReaderRestoresIndexLeftAside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "idx")
	publishDocs(t, dir, safefile.Replacer{}, "a")
	aside := safefile.AsideName(dir)
	if err := os.Rename(dir, aside); err != nil {
		t.Fatal(err)
	}
	if !IsIndex(dir) {
		t.Fatal("IsIndex did not put back the index left aside")
	}
	if names := dirNames(t, root); !reflect.DeepEqual(names, []string{"idx"}) {
		t.Errorf("root holds %v, want the index only", names)
	}

	l, err := LockDir(context.Background(), dir, false)
	if err != nil {
		t.Fatal(err)
	}
	os.Rename(dir, aside)
	got := make(chan error)
	go func() {
		_, err := ReadManifest(dir)
		got <- err
	}()
	time.Sleep(300 * time.Millisecond) // the reader waits for the lock
	l.Unlock()
	if err := <-got; err != nil {
		t.Errorf("reading while a build held the lock: %v", err)
	}
}

// TestLegacyAsideKept: the aside name of earlier versions
// (".NAME.msrag-tmp-RANDOM.old", which the staging cleanup matches) is put
// back, not removed, by the next build when the index is missing.
func TestLegacyAsideKept(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "idx")
	publishDocs(t, dir, safefile.Replacer{}, "a")
	if err := os.Rename(dir, filepath.Join(root, ".idx"+stagingMark+"123.old")); err != nil {
		t.Fatal(err)
	}
	failedRebuilds["aborted"](t, dir)
	if _, err := ReadManifest(dir); err != nil {
		t.Fatalf("no index after a rebuild that failed: %v", err)
	}
	if names := dirNames(t, root); !reflect.DeepEqual(names, []string{"idx"}) {
		t.Errorf("root holds %v, want the index only", names)
	}
}

// TestCleanupKeepsLastCompleteIndex: with no index in place, a staging
// directory that holds a complete one (a first build killed after writing
// its manifest) is kept by the next build's cleanup.
func TestCleanupKeepsLastCompleteIndex(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "idx")
	publishDocs(t, dir, safefile.Replacer{}, "a")
	staged := filepath.Join(root, ".idx"+stagingMark+"dead")
	os.Rename(dir, staged)
	failedRebuilds["aborted"](t, dir)
	if !hasManifest(staged) {
		t.Error("the cleanup removed the only complete index")
	}
	publishDocs(t, dir, safefile.Replacer{}, "a", "b")
	failedRebuilds["aborted"](t, dir)
	if names := dirNames(t, root); !reflect.DeepEqual(names, []string{"idx"}) {
		t.Errorf("root holds %v once an index is in place, want the index only", names)
	}
}
