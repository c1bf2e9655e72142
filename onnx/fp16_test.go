package onnx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/tokenizer"
)

// fp16Models lists the built-in models that have an fp16 file: every fp32
// one (the int8 ones are not converted).
func fp16Models(t *testing.T) []string {
	var names []string
	for _, m := range BuiltinModels() {
		if m.SHA256[FP16ModelFile] != "" {
			names = append(names, m.Name)
		}
	}
	if len(names) < 3 {
		t.Fatalf("models.json records fp16 files for %v: want every fp32 built-in model", names)
	}
	return names
}

// fetchedFP16 returns the directory of a fetched model that has its fp16
// file; it skips the test when the file is absent, unless CI is set (there
// setup makes the files: MSRAG_SETUP_FP16).
func fetchedFP16(tb testing.TB, name string) string {
	tb.Helper()
	dir := fetchedModel(tb, name)
	if _, err := os.Stat(filepath.Join(dir, FP16ModelFile)); err != nil {
		if os.Getenv("CI") == "" {
			tb.Skipf("model %s has no fp16 file (scripts/setup-fp16.sh, then msrag model fetch %s --fp16)", name, name)
		}
		tb.Fatalf("model %s has no fp16 file under CI: %v", name, err)
	}
	return dir
}

// TestFP16MatchesFP32 embeds SciFact passages cut to the model's longest
// sequence and to 256 tokens with model.onnx and with model_fp16.onnx, on the
// CPU, and wants every pair of vectors at cosine 0.999 or more.
func TestFP16MatchesFP32(t *testing.T) {
	texts := sampleTexts(t, 80)
	needTexts(t, 80, texts)
	for _, name := range fp16Models(t) {
		t.Run(name, func(t *testing.T) {
			dir := fetchedFP16(t, name)
			full := openModel(t, name, Options{Threads: 2})
			half, err := Open(dir, Options{FP16: true, Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer half.Close()
			lengths := []int{full.MaxTokens()}
			if full.MaxTokens() != 256 {
				lengths = append(lengths, 256)
			}
			for _, total := range lengths {
				seqs := fullLengthSeqs(t, full, texts, total)
				a, err := full.EmbedTokens(context.Background(), seqs, Passage)
				if err != nil {
					t.Fatal(err)
				}
				b, err := half.EmbedTokens(context.Background(), seqs, Passage)
				if err != nil {
					t.Fatal(err)
				}
				d, low := full.Dims(), 1.0
				for i := range seqs {
					c := cosine(a[i*d:(i+1)*d], b[i*d:(i+1)*d])
					if c < 0.999 || math.IsNaN(c) {
						t.Errorf("%d tokens, sequence %d: cosine fp16/fp32 %.6f, want >= 0.999", total, i, c)
					}
					low = min(low, c)
				}
				t.Logf("%d tokens: lowest cosine fp16/fp32 %.6f", total, low)
			}
		})
	}
}

// fullLengthSeqs cuts the texts, joined, into 2 content sequences that make
// sequences of exactly total tokens with the passage prefix and the special
// tokens.
func fullLengthSeqs(t *testing.T, e *Embedder, texts []string, total int) [][]int32 {
	t.Helper()
	n := total - e.Tokenizer().NumSpecialTokens() - e.PrefixTokens(Passage)
	ids := e.Tokenizer().EncodeWith(strings.Join(texts, " "), tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
	var seqs [][]int32
	for len(seqs) < 2 && len(ids) >= n {
		seqs, ids = append(seqs, ids[:n]), ids[n:]
	}
	if len(seqs) < 2 {
		t.Fatalf("SciFact texts make %d sequences of %d tokens, want 2", len(seqs), total)
	}
	return seqs
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// TestFP16Spec checks what an fp16 model says of itself: its precision,
// the sum of the file it loaded (not model.onnx's), and an origin that
// reopens it in fp16.
func TestFP16Spec(t *testing.T) {
	name := "all-minilm-l6-v2"
	dir := fetchedFP16(t, name)
	e, err := Open(dir, Options{FP16: true, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	b, _ := Builtin(name)
	s := e.Spec()
	if s.Precision != PrecisionFP16 || s.Checksums[FP16ModelFile] != b.SHA256[FP16ModelFile] || s.Checksums[ModelFile] != "" {
		t.Errorf("spec precision %q, checksums %v: want fp16 and %s's sum only", s.Precision, s.Checksums, FP16ModelFile)
	}
	if o := e.Origin(); o.Params != `{"model":"all-minilm-l6-v2","precision":"fp16"}` {
		t.Errorf("origin params %s", o.Params)
	}
	full := openModel(t, name, Options{Threads: 1})
	if s := full.Spec(); s.Precision != "" || s.Checksums[FP16ModelFile] != "" {
		t.Errorf("fp32 spec precision %q, checksums %v", s.Precision, s.Checksums)
	}
	if o := full.Origin(); o.Params != `{"model":"all-minilm-l6-v2"}` {
		t.Errorf("fp32 origin params %s: want those of indices made before fp16 models", o.Params)
	}
}

// TestReopenOtherPrecision checks that reopening a model in the other
// precision than an origin records is refused, saying which it was.
func TestReopenOtherPrecision(t *testing.T) {
	cases := []struct {
		params string
		fp16   bool
		want   string
	}{
		{`{"model":"all-minilm-l6-v2","precision":"fp16"}`, false, "in fp16"},
		{`{"model":"all-minilm-l6-v2"}`, true, "in fp32"},
		{`{"model":"all-minilm-l6-v2","precision":"fp32"}`, true, "in fp32"},
		{`{"model":"all-minilm-l6-v2","precision":"int4"}`, false, `precision "int4"`},
	}
	for _, tc := range cases {
		o := embed.Options{Extra: []any{Options{FP16: tc.fp16}}}
		_, err := reopenKind(context.Background(), embed.Origin{Kind: KindName, Params: tc.params}, o)
		if !errors.Is(err, ErrPrecision) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with FP16 %v: error %v, want ErrPrecision saying %q", tc.params, tc.fp16, err, tc.want)
		}
	}
}

// TestEnsureFP16WithoutConverter checks that a model without its fp16 file
// and no converter installed is a clear error naming the script that
// installs it, and leaves the model directory as it was.
func TestEnsureFP16WithoutConverter(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCache, cache)
	t.Setenv(EnvOffline, "")
	dir := filepath.Join(cache, "models", "m")
	info := ModelInfo{Name: "m", MaxTokens: 8, Pooling: PoolMean, Output: "last_hidden_state", SHA256: map[string]string{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteModelInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ModelFile), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(dir)
	err := EnsureFP16(context.Background(), dir, FetchOptions{})
	if !errors.Is(err, ErrNoConverter) || !strings.Contains(err.Error(), "scripts/setup-fp16.sh") {
		t.Fatalf("error %v, want ErrNoConverter naming scripts/setup-fp16.sh", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("model directory holds %d entries after, %d before", len(after), len(before))
	}
	err = EnsureFP16(context.Background(), dir, FetchOptions{Offline: true})
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "msrag model fetch m --fp16") {
		t.Fatalf("offline: error %v, want ErrOffline naming msrag model fetch m --fp16", err)
	}
}

// TestVerifyFilesSkipsFP16 checks that a model whose description records
// an fp16 file that was never made still verifies (its fp32 files), and that
// an fp16 file of another sum is refused when it is opened.
func TestVerifyFilesSkipsFP16(t *testing.T) {
	src := fetchedModel(t, "all-minilm-l6-v2")
	dir := t.TempDir()
	for _, f := range []string{ModelFile, TokenizerFile, InfoFile} {
		if err := os.Symlink(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	info, err := ReadModelInfo(src)
	if err != nil {
		t.Fatal(err)
	}
	info.SHA256[FP16ModelFile] = strings.Repeat("0", 64)
	os.Remove(filepath.Join(dir, InfoFile))
	if err := WriteModelInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	if err := VerifyFiles(dir, info); err != nil {
		t.Fatalf("VerifyFiles with no fp16 file: %v", err)
	}
	if err := os.Symlink(filepath.Join(src, ModelFile), filepath.Join(dir, FP16ModelFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{FP16: true}); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), FP16ModelFile) {
		t.Fatalf("Open fp16 of another sum: error %v, want ErrChecksum naming %s", err, FP16ModelFile)
	}
}

// BenchmarkEmbedTokensFP16 is BenchmarkEmbedTokens with model.onnx and
// model_fp16.onnx side by side on the CPU, where ONNX Runtime runs the fp16
// file with casts around the operators it has no fp16 kernels for: fp16 is
// for GPUs, this says what it costs where there is none.
func BenchmarkEmbedTokensFP16(b *testing.B) {
	for _, model := range []string{"all-minilm-l6-v2", "e5-small-v2"} {
		for _, fp16 := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/window=200/%s", model, precisionOf(fp16)), func(b *testing.B) {
				if fp16 {
					fetchedFP16(b, model)
				}
				benchEmbedTokens(b, model, 200, 64, Options{FP16: fp16})
			})
		}
	}
}

// fakeConverter installs, as the cache's fp16 converter, a script that
// writes content to the output path it is given.
func fakeConverter(t *testing.T, cache, content string) {
	t.Helper()
	venv := filepath.Join(cache, "venv", "fp16")
	if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	py := "#!/bin/sh\nprintf '%s' '" + content + "' > \"$3\"\n"
	if err := os.WriteFile(filepath.Join(venv, "bin", "python"), []byte(py), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(venv, "fp16_convert.py"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEnsureFP16ChecksTheConversion runs EnsureFP16 with a converter that
// does not give the bytes models.json records for a built-in model (refused,
// nothing left behind), and for a model that is not built in (its sha256
// recorded in msrag-model.json, and checked when the file is opened).
func TestEnsureFP16ChecksTheConversion(t *testing.T) {
	src := fetchedModel(t, "all-minilm-l6-v2")
	cache := t.TempDir()
	t.Setenv(EnvCache, cache)
	fakeConverter(t, cache, "not the pinned bytes")
	model := func(name string) string {
		dir := filepath.Join(cache, "models", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{ModelFile, TokenizerFile} {
			if err := os.Symlink(filepath.Join(src, f), filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		info, _ := Builtin("all-minilm-l6-v2")
		info.Name = name
		delete(info.SHA256, FP16ModelFile)
		if err := WriteModelInfo(dir, info); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	dir := model("all-minilm-l6-v2")
	before, _ := os.ReadDir(dir)
	err := EnsureFP16(context.Background(), dir, FetchOptions{})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "not the pinned one") {
		t.Fatalf("built-in: error %v, want ErrChecksum", err)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("built-in: %d entries after a refused conversion, %d before", len(after), len(before))
	}

	dir = model("my-model")
	if err := EnsureFP16(context.Background(), dir, FetchOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := ReadModelInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, FP16ModelFile))
	if string(got) != "not the pinned bytes" || info.SHA256[FP16ModelFile] == "" || !PresentFP16(dir) {
		t.Fatalf("fp16 file %q, recorded sha256 %q", got, info.SHA256[FP16ModelFile])
	}
	if err := os.WriteFile(filepath.Join(dir, FP16ModelFile), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{FP16: true}); !errors.Is(err, ErrChecksum) {
		t.Errorf("Open of a changed fp16 file: error %v, want ErrChecksum", err)
	}
}
