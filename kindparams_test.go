package msrag

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/internal/testkind"
)

// TestIdentitySeesEveryKindsParams checks that the identity of a
// configuration records the parameters of every kind it builds, as the
// built index's manifest records them, so that a change to one parameter
// of any kind is a difference (which eval's reuse and the shard checks
// read), named by the kind and the parameter.
func TestIdentitySeesEveryKindsParams(t *testing.T) {
	emb := testEmbedder(t)
	cfg := func(p testkind.Params) Config {
		return Config{Embedder: emb, Windows: testWindows, Channels: withLexical(DefaultLexical(), p)}
	}
	ix, err := Build(context.Background(), openCorpus(t, writeJSONL(t, scifactDocs(t, 30)), corpus.Options{}), cfg(testkind.Params{Min: 2}))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	m := ix.Manifest()
	have, err := IdentityOf(&m)
	if err != nil {
		t.Fatal(err)
	}
	same, err := cfg(testkind.Params{Min: 2, Weight: testkind.Count}).Identity()
	if err != nil {
		t.Fatal(err)
	}
	if d := have.Diff(same); len(d.Differences) > 0 {
		t.Errorf("the same parameters differ: %v", d.Differences)
	}
	other, err := cfg(testkind.Params{Min: 2, Weight: testkind.Rare}).Identity()
	if err != nil {
		t.Fatal(err)
	}
	x, ok := have.Diff(other).Field(testkind.Name)
	if !ok || x.Have != "weight=count" || x.Want != "weight=rare" {
		t.Errorf("another weight: difference %+v (%v), want overlap weight=count, not weight=rare", x, ok)
	}
	lex := *DefaultLexical()
	lex.BM25.K1 = 1.2
	c := cfg(testkind.Params{Min: 2})
	c.Channels[1] = lex
	other, err = c.Identity()
	if err != nil {
		t.Fatal(err)
	}
	if x, ok := have.Diff(other).Field(Lexical.Name()); !ok || x.Have != "k1=0.9" || x.Want != "k1=1.2" {
		t.Errorf("another k1: difference %+v (%v)", x, ok)
	}
}

// TestKindChecksItsManifestSection checks that the manifest's section of
// the test kind is checked by the kind when the manifest is read: a value
// out of range, or a file of other rows, is refused as an invalid
// manifest naming the kind and the field.
func TestKindChecksItsManifestSection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "idx")
	ix, err := Build(context.Background(), openCorpus(t, writeJSONL(t, scifactDocs(t, 30)), corpus.Options{}),
		Config{Embedder: testEmbedder(t), Windows: testWindows, Out: out, Channels: withLexical(nil, testkind.Params{})})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	for name, c := range map[string]struct {
		edit func(sec map[string]any)
		want string
	}{
		"min 0":        {func(sec map[string]any) { sec["min"] = 0 }, "overlap channels: channels.overlap: min 0: want 1 or more"},
		"weight heavy": {func(sec map[string]any) { sec["weight"] = "heavy" }, `overlap channels: channels.overlap: weight "heavy"`},
		"rows": {func(sec map[string]any) { sec["files"].([]any)[1].(map[string]any)["rows"] = 1 },
			"overlap channels: channels.overlap.files[1]: 1 rows"},
		"file name": {func(sec map[string]any) { sec["files"].([]any)[0].(map[string]any)["file"] = "../w16.ovl" },
			`channels.overlap.files[0].file "../w16.ovl"`},
	} {
		dir := filepath.Join(t.TempDir(), "copy")
		copyDir(t, out, dir)
		editManifest(t, dir, func(m map[string]any) { c.edit(m["channels"].(map[string]any)[testkind.Name].(map[string]any)) })
		_, err := Open(dir)
		if !errors.Is(err, store.ErrBadManifest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid manifest saying %q", name, err, c.want)
		}
	}
}
