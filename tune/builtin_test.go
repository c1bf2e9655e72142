package tune

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/router"
)

// TestBuiltinTransfer: the built-in fusion shipped in this msrag reads,
// routes on the kind features (which mean the same on every dataset and
// model), serves an index of its channels whatever its model, and is
// refused, naming the channels it needs, by an index that lacks some.
func TestBuiltinTransfer(t *testing.T) {
	windows := append(chunk.Sizes(64, 128, 254), chunk.Full)
	ix, _ := tinySetOf(t, 160, windows, &bm25.Config{})
	m, err := Builtin(TransferName, ix)
	if err != nil {
		t.Fatal(err)
	}
	if m.Router == nil || m.Router.Set() != router.Kinds || !m.Transfers() || len(m.Training) < 3 {
		t.Fatalf("built-in %s: router %v, transfers %v, %d training datasets; want a kinds router trained on several datasets",
			TransferName, m.Router != nil, m.Transfers(), len(m.Training))
	}
	f, name, err := m.Chosen()
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.CheckFusion(f); err != nil || !strings.HasPrefix(name, "learned") {
		t.Errorf("chosen fusion %s (%s) on an index of its channels: %v", f, name, err)
	}

	dense, _ := tinySetOf(t, 160, windows, nil)
	_, err = Builtin(TransferName, dense)
	if !errors.Is(err, msrag.ErrIndexMismatch) || !strings.Contains(err.Error(), "bm25-doc") || !strings.Contains(err.Error(), dense.Dir()) {
		t.Errorf("index without lexical windows: %v; want ErrIndexMismatch naming bm25-doc and the index", err)
	}
	if _, err := Builtin("transfer2", ix); !errors.Is(err, ErrNoBuiltin) {
		t.Errorf("unknown built-in: %v, want ErrNoBuiltin", err)
	}
}

// TestBuiltinRefusesBadFiles: a built-in file that is damaged, or whose
// router is of a feature set of another version, is refused as a file
// would be, naming it; an msrag without a built-in file says so.
func TestBuiltinRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	later := testFusionModel()
	later.Router.Features = "kinds/9"
	for _, tc := range []struct {
		name string
		m    *FusionModel
		edit func(string) string
		want string
	}{
		{"damaged", testFusionModel(), func(s string) string { return strings.Replace(s, `"rule": "rrf"`, `"rule": "docrrf"`, 1) }, "changed or damaged"},
		{"later features", later, nil, "another version"},
	} {
		p := filepath.Join(dir, tc.name+".json")
		if err := tc.m.Write(p); err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(p)
		if tc.edit != nil {
			if e := tc.edit(string(data)); e != string(data) {
				data = []byte(e)
			} else {
				t.Fatalf("%s: edit changed nothing", tc.name)
			}
		}
		fsys := fstest.MapFS{"b/transfer-" + tc.name + ".json": {Data: data}}
		_, err := builtinFrom(fsys, "b", TransferName, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "transfer-"+tc.name+".json") {
			t.Errorf("%s: %v; want an error naming the file with %q", tc.name, err, tc.want)
		}
	}
	if _, err := builtinFrom(fstest.MapFS{}, "b", TransferName, nil); !errors.Is(err, ErrNoBuiltin) {
		t.Errorf("no built-in file: %v, want ErrNoBuiltin", err)
	}
}
