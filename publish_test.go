package msrag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/safefile"
)

// copyTree copies the directory src to dst, which must not exist.
func copyTree(tb testing.TB, src, dst string) {
	tb.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.Mkdir(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestCrashDuringPublishThenFailedRebuild builds an index of 20 documents,
// then one of 30 over it, and copies the directory as a crash before each
// step of that publish would leave it (with the exchange, and with the two
// renames of a file system that refuses it). From each copy, a rebuild
// that fails (a malformed corpus line, a duplicate id, its context
// cancelled mid-build) must leave a complete index, the old or the new,
// that opens; with the exchange the index is there before every step.
func TestCrashDuringPublishThenFailedRebuild(t *testing.T) {
	emb := testEmbedder(t)
	docs := scifactDocs(t, 30)
	bad := t.TempDir()
	malformed := filepath.Join(bad, "malformed.jsonl")
	lines, _ := os.ReadFile(writeJSONL(t, docs[:25]))
	os.WriteFile(malformed, append(lines, []byte("{\"_id\": \"x\", \"text\": \n")...), 0o644)
	dup := writeJSONL(t, append(docs[:25:25], docs[3]))
	good := writeJSONL(t, docs)
	rebuilds := map[string]func(out string) error{
		"malformed line": func(out string) error {
			_, err := Build(context.Background(), openCorpus(t, malformed, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out})
			return err
		},
		"duplicate id": func(out string) error {
			_, err := Build(context.Background(), openCorpus(t, dup, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out})
			return err
		},
		"cancelled": func(out string) error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hook := func(id string) error {
				if id == docs[10].ID {
					cancel()
				}
				return nil
			}
			_, err := Build(ctx, openCorpus(t, good, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out, prepareHook: hook})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled rebuild: %v", err)
			}
			return err
		},
	}
	for _, mode := range []struct {
		name  string
		r     safefile.Replacer
		steps []string
	}{
		{"exchange", safefile.Replacer{}, []string{string(safefile.StepExchange), string(safefile.StepRemove), "done"}},
		{"two renames", safefile.Replacer{NoExchange: true}, []string{string(safefile.StepAside), string(safefile.StepInPlace), string(safefile.StepRemove), "done"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			out := filepath.Join(root, "idx")
			if _, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs[:20]), corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out}); err != nil {
				t.Fatal(err)
			}
			states := map[string]string{}
			r := mode.r
			r.Step = func(st safefile.Step) {
				step := string(st)
				if !mode.r.NoExchange && !IsIndex(out) {
					t.Errorf("no index before step %q of a publish by exchange", step)
				}
				states[step] = filepath.Join(t.TempDir(), "root")
				copyTree(t, root, states[step])
			}
			if _, err := Build(context.Background(), openCorpus(t, good, corpus.Options{}), Config{Embedder: emb, Windows: testWindows, Out: out, publish: r}); err != nil {
				t.Fatal(err)
			}
			states["done"] = root
			if len(states) != len(mode.steps) {
				t.Fatalf("publish stopped before %d steps, want %v", len(states)-1, mode.steps)
			}
			if mode.r.NoExchange {
				// What earlier versions left between the two renames: the
				// old index under a name the staging cleanup matches.
				legacy := filepath.Join(t.TempDir(), "root")
				copyTree(t, states[string(safefile.StepAside)], legacy)
				if err := os.Rename(filepath.Join(legacy, "idx"), filepath.Join(legacy, ".idx.msrag-tmp-1.old")); err != nil {
					t.Fatal(err)
				}
				states["earlier versions' aside"] = legacy
				mode.steps = append(mode.steps, "earlier versions' aside")
			}
			for _, step := range mode.steps {
				for name, rebuild := range rebuilds {
					t.Run(step+"/"+name, func(t *testing.T) {
						root := filepath.Join(t.TempDir(), "root")
						copyTree(t, states[step], root)
						out := filepath.Join(root, "idx")
						if err := rebuild(out); err == nil {
							t.Fatal("the rebuild did not fail")
						}
						ix, err := Open(out)
						if err != nil {
							t.Fatalf("no index after a crash before %q and a failed rebuild: %v", step, err)
						}
						defer ix.Close()
						if n := ix.Manifest().Docs; n != 20 && n != 30 {
							t.Errorf("index of %d documents, want 20 (old) or 30 (new)", n)
						}
						if names := entryNames(t, root); !reflect.DeepEqual(names, []string{"idx"}) {
							t.Errorf("root holds %v, want the index only", names)
						}
					})
				}
			}
		})
	}
}

func entryNames(tb testing.TB, dir string) []string {
	tb.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestShardDirsAfterCrash: a shard a crash left aside is put back before
// the shards are listed, and the copies a publish keeps under hidden names
// (a staging directory holding a complete index, the old one aside) are
// never taken as shards.
func TestShardDirsAfterCrash(t *testing.T) {
	base := t.TempDir()
	shards := buildShards(t, writeJSONL(t, scifactDocs(t, 30)), base, 2, 4, Config{Embedder: testEmbedder(t), Windows: testWindows})
	copyTree(t, shards[0], filepath.Join(base, ".shard-0.msrag-tmp-7"))
	if err := os.Rename(shards[1], safefile.AsideName(shards[1])); err != nil {
		t.Fatal(err)
	}
	if got := ShardDirs(base); !reflect.DeepEqual(got, shards) {
		t.Errorf("ShardDirs = %v, want %v", got, shards)
	}
}
