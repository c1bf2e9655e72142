package msrag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/embedders"
	"github.com/msrag/msrag/onnx"
)

// halfEmbedder is an embedder that says it runs in another precision, as
// an ONNX model opened with onnx.Options.FP16 does.
type halfEmbedder struct {
	Embedder
	precision string
}

func (e halfEmbedder) Spec() embed.Spec {
	s := e.Embedder.Spec()
	s.Precision = e.precision
	return s
}

// TestPrecisionRecordedAndChecked builds an index with a model that runs in
// fp16 and one in fp32 (the same model otherwise), and checks that each
// manifest records its precision (fp32 as none, as before fp16 models), and
// that searching either with the other precision is refused with an error
// that says which precision each has, as eval's reuse and shards see it too.
func TestPrecisionRecordedAndChecked(t *testing.T) {
	if _, err := onnx.ResolveModel(embedders.HashTokenizerModel); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	full, err := embedders.OpenHash()
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	half := halfEmbedder{full, "fp16"}
	docs := scifactDocs(t, 12)
	ctx := context.Background()
	build := func(emb Embedder, name string) string {
		dir := filepath.Join(t.TempDir(), name)
		ix, err := Build(ctx, openCorpus(t, writeJSONL(t, docs), corpus.Options{}), Config{Embedder: emb, Out: dir, Windows: testWindows})
		if err != nil {
			t.Fatal(err)
		}
		ix.Close()
		return dir
	}
	halfDir, fullDir := build(half, "fp16"), build(full, "fp32")

	raw, _ := os.ReadFile(filepath.Join(halfDir, "manifest.json"))
	if !strings.Contains(string(raw), `"precision": "fp16"`) {
		t.Errorf("fp16 manifest does not record the precision:\n%s", raw)
	}
	raw, _ = os.ReadFile(filepath.Join(fullDir, "manifest.json"))
	if strings.Contains(string(raw), `"precision"`) {
		t.Errorf("fp32 manifest records a precision; want none, as before fp16 models")
	}

	cases := []struct {
		dir       string
		emb       Embedder
		have, use string
	}{
		{halfDir, full, "fp16", "fp32"},
		{fullDir, half, "fp32", "fp16"},
	}
	for _, tc := range cases {
		_, err := OpenWith(OpenOptions{Embedder: tc.emb}, tc.dir)
		want := "in " + tc.have + ", this " + full.Spec().Name + " runs in " + tc.use
		if !errors.Is(err, ErrIndexMismatch) || !strings.Contains(err.Error(), want) {
			t.Errorf("index in %s searched in %s: error %v, want ErrIndexMismatch saying %q", tc.have, tc.use, err, want)
		}
	}
	for _, tc := range []struct {
		dir string
		emb Embedder
	}{{halfDir, half}, {fullDir, full}} {
		ix, err := OpenWith(OpenOptions{Embedder: tc.emb}, tc.dir)
		if err != nil {
			t.Fatalf("%s with its own precision: %v", tc.dir, err)
		}
		ix.Close()
	}

	mh, _ := ReadManifest(halfDir)
	mf, _ := ReadManifest(fullDir)
	ih, _ := IdentityOf(mh)
	iff, _ := IdentityOf(mf)
	x, ok := ih.Diff(iff).Field("precision")
	if !ok || x.Have != "fp16" || x.Want != "fp32" || !strings.Contains(x.Explain(), "different precisions (fp16, fp32)") {
		t.Errorf("identity diff %+v (%v): want precision fp16, not fp32", ih.Diff(iff), ok)
	}
	if _, ok := ih.Diff(iff).Field("model"); ok {
		t.Errorf("identity diff says the model differs: %+v", ih.Diff(iff))
	}
}
