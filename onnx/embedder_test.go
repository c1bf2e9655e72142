package onnx

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/internal/vectest"
	"github.com/msrag/msrag/tokenizer"
)

// refFile is a golden file written by scripts/check_embeddings.py --golden: vectors
// computed by Hugging Face tokenizers + Python onnxruntime on the same model files.
type refFile struct {
	Model  string            `json:"model"`
	SHA256 map[string]string `json:"sha256"`
	Texts  []struct {
		Text   string    `json:"text"`
		Role   string    `json:"role"`
		Source string    `json:"source"`
		Vector []float32 `json:"vector"`
	} `json:"texts"`
}

func readRef(tb testing.TB, path string) refFile {
	tb.Helper()
	var r refFile
	if err := json.Unmarshal(testfiles.ReadGzip(tb, path), &r); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return r
}

// TestReferenceVectors compares Embed with the committed reference vectors. Regenerate
// them with scripts/check_embeddings.py --golden (see its doc string).
func TestReferenceVectors(t *testing.T) {
	files, _ := filepath.Glob("testdata/ref-*.json.gz")
	if len(files) == 0 {
		t.Fatal("no testdata/ref-*.json.gz")
	}
	for _, path := range files {
		ref := readRef(t, path)
		t.Run(ref.Model, func(t *testing.T) {
			e := openModel(t, ref.Model, Options{})
			if got := e.Checksums(); got[ModelFile] != ref.SHA256[ModelFile] || got[TokenizerFile] != ref.SHA256[TokenizerFile] {
				t.Fatalf("model files %v differ from those of the reference %v", got, ref.SHA256)
			}
			for _, role := range []Role{Passage, Query} {
				var texts []string
				var want [][]float32
				var src []string
				for _, x := range ref.Texts {
					if x.Role == role.String() {
						texts, want, src = append(texts, x.Text), append(want, x.Vector), append(src, x.Source)
					}
				}
				got, err := e.Embed(context.Background(), texts, role)
				if err != nil {
					t.Fatal(err)
				}
				d := e.Dims()
				for i := range texts {
					if c := vectest.Cosine(got[i*d:(i+1)*d], want[i]); c < 0.99999 {
						t.Errorf("%s %s (%d bytes): cosine %.7f with the reference, want >= 0.99999", role, src[i], len(texts[i]), c)
					}
				}
			}
		})
	}
}

// TestPrefixIDs checks that the prefix's ids followed by the text's ids equal the
// ids of prefix+text, which EmbedTokens relies on, for every built-in prefix.
func TestPrefixIDs(t *testing.T) {
	for _, name := range []string{"e5-small-v2", "bge-small-en-v1.5"} {
		t.Run(name, func(t *testing.T) {
			dir := fetchedModel(t, name)
			tok, err := tokenizer.Load(filepath.Join(dir, TokenizerFile))
			if err != nil {
				t.Fatal(err)
			}
			info, _ := ReadModelInfo(dir)
			texts := []string{"", "plain words", "  leading spaces", "Ünïcödé and 東京", "x", "[CLS] literal special", "passage: twice"}
			texts = append(texts, sampleTexts(t, 200)...)
			no := tokenizer.Options{NoSpecial: true, MaxLength: -1}
			for _, r := range []Role{Query, Passage} {
				p := info.Prefix(r)
				if p == "" {
					continue
				}
				pids := tok.EncodeWith(p, no).IDs
				for _, text := range texts {
					want := tok.EncodeWith(p+text, no).IDs
					got := append(slices.Clone(pids), tok.EncodeWith(text, no).IDs...)
					if !slices.Equal(got, want) {
						t.Fatalf("%s prefix %q + %q: ids %v, want %v", r, p, text, got, want)
					}
				}
			}
		})
	}
}

// sampleTexts reads n SciFact abstracts from the cache, when present.
func sampleTexts(tb testing.TB, n int) []string {
	return readSciFact(tb, "corpus.jsonl.gz", n)
}

// readSciFact returns the text field of the first n records of a file of
// SciFact in the cache (corpus or queries; testfiles.DataDir), or nil when it
// is absent.
func readSciFact(tb testing.TB, file string, n int) []string {
	tb.Helper()
	path := filepath.Join(testfiles.DataDir("scifact"), file)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	var out []string
	for _, r := range sciFactRecords(tb, path, n) {
		out = append(out, r.Text)
	}
	return out
}

// sciFactRecord is the part of a SciFact corpus or queries record the
// tests read.
type sciFactRecord struct{ Title, Text string }

// sciFactRecords decodes the first n records of a gzipped SciFact JSONL
// file (fewer where it ends first).
func sciFactRecords(tb testing.TB, path string, n int) []sciFactRecord {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	dec := json.NewDecoder(zr)
	var out []sciFactRecord
	for len(out) < n {
		var r sciFactRecord
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, r)
	}
	return out
}

func TestEmbedTokensMatchesEmbed(t *testing.T) {
	e := openModel(t, "e5-small-v2-int8", Options{TokenBudget: 600})
	texts := append([]string{"short", "a somewhat longer query about protein folding"}, sampleTexts(t, 6)...)
	for _, role := range []Role{Query, Passage} {
		want, err := e.Embed(context.Background(), texts, role)
		if err != nil {
			t.Fatal(err)
		}
		seqs := make([][]int32, len(texts))
		for i, enc := range e.Tokenizer().EncodeBatch(texts, tokenizer.Options{NoSpecial: true, MaxLength: -1}) {
			seqs[i] = enc.IDs[:min(len(enc.IDs), e.MaxContentTokens(role))]
		}
		got, err := e.EmbedTokens(context.Background(), seqs, role)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: EmbedTokens differs from Embed", role)
		}
	}
}

// TestBatchIndependence checks that an fp32 model gives a text the same vector
// whatever batch (and padding) it is in. Dynamically quantized (int8) models do not:
// they scale activations per batch (docs/models.md).
func TestBatchIndependence(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2", Options{})
	texts := append([]string{"short", "a somewhat longer query about protein folding"}, sampleTexts(t, 4)...)
	want, err := e.Embed(context.Background(), texts, Query)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Dims()
	for i := range texts {
		one, err := e.Embed(context.Background(), texts[i:i+1], Query)
		if err != nil {
			t.Fatal(err)
		}
		if c := vectest.Cosine(one, want[i*d:(i+1)*d]); c < 0.99999 {
			t.Fatalf("text %d alone: cosine %.7f with the batched vector", i, c)
		}
	}
}

func TestEmbedderAccessors(t *testing.T) {
	e := openModel(t, "e5-small-v2-int8", Options{})
	tok := e.Tokenizer()
	q := tok.EncodeWith("query: ", tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
	p := tok.EncodeWith("passage: ", tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
	if e.PrefixTokens(Query) != len(q) || e.PrefixTokens(Passage) != len(p) || len(q) == 0 {
		t.Fatalf("PrefixTokens = %d, %d; want %d, %d", e.PrefixTokens(Query), e.PrefixTokens(Passage), len(q), len(p))
	}
	if e.Dims() != 384 || e.MaxTokens() != 512 || e.Device() != DeviceCPU {
		t.Fatalf("Dims %d MaxTokens %d Device %s", e.Dims(), e.MaxTokens(), e.Device())
	}
	if got, want := e.MaxContentTokens(Query), 512-2-len(q); got != want {
		t.Fatalf("MaxContentTokens(Query) = %d, want %d", got, want)
	}
	info, _ := Builtin("e5-small-v2-int8")
	if sums := e.Checksums(); sums[ModelFile] != info.SHA256[ModelFile] || sums[TokenizerFile] != info.SHA256[TokenizerFile] {
		t.Fatalf("Checksums = %v", sums)
	}
}

func TestEmbedTokensErrors(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2-int8", Options{})
	long := make([]int32, e.MaxContentTokens(Passage)+1)
	for i := range long {
		long[i] = 1000
	}
	_, err := e.EmbedTokens(context.Background(), [][]int32{{1000}, long}, Passage)
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "sequence 1") {
		t.Fatalf("too long: error %v, want ErrInput naming sequence 1", err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}, Role(7)); !errors.Is(err, ErrInput) {
		t.Fatalf("bad role: error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, []string{"x"}, Query); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: error %v", err)
	}
	// Empty input gives no rows.
	if v, err := e.Embed(context.Background(), nil, Query); err != nil || len(v) != 0 {
		t.Fatalf("no texts: %v, %v", v, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}, Query); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: error %v, want ErrClosed", err)
	}
}

func TestConcurrentEmbed(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2-int8", Options{TokenBudget: 256})
	texts := sampleTexts(t, 12)
	if len(texts) == 0 {
		texts = []string{"one", "two words", "three more words"}
	}
	want, err := e.Embed(context.Background(), texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Embed(context.Background(), texts, Passage)
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("concurrent Embed gave other vectors")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2-int8")
	t.Run("bad device", func(t *testing.T) {
		if _, err := Open(dir, Options{Device: "tpu"}); !errors.Is(err, ErrInput) {
			t.Fatalf("error %v, want ErrInput", err)
		}
	})
	t.Run("no fp16 file", func(t *testing.T) {
		_, err := Open(dir, Options{FP16: true})
		if !errors.Is(err, ErrModelFiles) || !strings.Contains(err.Error(), "msrag model fetch all-minilm-l6-v2-int8 --fp16") {
			t.Fatalf("error %v, want ErrModelFiles naming the command that makes the file", err)
		}
	})
	t.Run("checksum", func(t *testing.T) {
		copyDir := t.TempDir()
		for _, f := range []string{ModelFile, InfoFile} {
			data, _ := os.ReadFile(filepath.Join(dir, f))
			os.WriteFile(filepath.Join(copyDir, f), data, 0o644)
		}
		os.WriteFile(filepath.Join(copyDir, TokenizerFile), []byte(`{}`), 0o644)
		_, err := Open(copyDir, Options{})
		if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), TokenizerFile) {
			t.Fatalf("error %v, want ErrChecksum naming %s", err, TokenizerFile)
		}
	})
}

// TestCUDAUnavailable checks that asking for CUDA from a CPU-only ONNX Runtime is a
// clear error, never a silent CPU session, and that auto falls back and says so.
func TestCUDAUnavailable(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2-int8")
	if cudaProviderBeside(LibraryPath()) {
		t.Skip("the ONNX Runtime library has a CUDA provider; see TestCUDA")
	}
	_, err := Open(dir, Options{Device: DeviceCUDA})
	if !errors.Is(err, ErrCUDAUnavailable) {
		t.Fatalf("cuda on a CPU build: error %v, want ErrCUDAUnavailable", err)
	}
	if !strings.Contains(err.Error(), "CPU build") {
		t.Fatalf("error does not say why: %v", err)
	}
	var log strings.Builder
	e, err := Open(dir, Options{Device: DeviceAuto, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Device() != DeviceCPU || strings.Count(log.String(), "using the cpu") != 1 {
		t.Fatalf("auto: device %s, log %q", e.Device(), log.String())
	}
}

// needCUDA skips a test unless the ONNX Runtime library has a CUDA provider
// and the machine has a GPU: the CUDA path is tested where it can run.
func needCUDA(t testing.TB) {
	t.Helper()
	if !cudaProviderBeside(LibraryPath()) {
		t.Skip("no CUDA provider in the ONNX Runtime library")
	}
	if _, err := os.Stat("/dev/nvidia0"); err != nil {
		t.Skip("no GPU")
	}
}

// cudaTestModel is the model the CUDA tests run: $MSRAG_CUDA_TEST_MODEL, else
// all-minilm-l6-v2 (scripts/gpu-check.sh picks one small enough to carry).
func cudaTestModel() string {
	if m := os.Getenv("MSRAG_CUDA_TEST_MODEL"); m != "" {
		return m
	}
	return "all-minilm-l6-v2"
}

// TestCUDA runs the model on the GPU where there is one, and compares with the CPU.
func TestCUDA(t *testing.T) {
	needCUDA(t)
	cpu := openModel(t, cudaTestModel(), Options{})
	gpu := openModel(t, cudaTestModel(), Options{Device: DeviceCUDA})
	texts := []string{"a query", "another text about cells"}
	a, err := cpu.Embed(context.Background(), texts, Query)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gpu.Embed(context.Background(), texts, Query)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if c := vectest.Cosine(a[i*cpu.Dims():(i+1)*cpu.Dims()], b[i*cpu.Dims():(i+1)*cpu.Dims()]); c < 0.9999 {
			t.Fatalf("text %d: cosine cpu/gpu %.6f", i, c)
		}
	}
}

// TestCUDAErrorSaysWhy checks the reason given when the CUDA provider cannot be
// created: ONNX Runtime's message names the provider library both when a CPU
// build has none and when a GPU build's provider cannot load a CUDA library, and
// only the second has the provider library beside the ONNX Runtime library.
func TestCUDAErrorSaysWhy(t *testing.T) {
	gpuBuild, cpuBuild := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(gpuBuild, cudaProviderLib), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	loadFail := errors.New("Failed to load library " + filepath.Join(gpuBuild, cudaProviderLib) +
		" with error: libcublasLt.so.13: cannot open shared object file: No such file or directory")
	noProvider := errors.New("Failed to load library " + filepath.Join(cpuBuild, cudaProviderLib) +
		" with error: " + filepath.Join(cpuBuild, cudaProviderLib) + ": cannot open shared object file: No such file or directory")
	for _, c := range []struct {
		name, lib string
		err       error
		want, not string
	}{
		{"gpu build, cuBLAS missing", filepath.Join(gpuBuild, "libonnxruntime.so.1"), loadFail, "needs libcublasLt.so.13", "CPU build"},
		{"cpu build", filepath.Join(cpuBuild, "libonnxruntime.so.1"), noProvider, "CPU build", "needs"},
		{"gpu build, no library named", filepath.Join(gpuBuild, "libonnxruntime.so.1"), errors.New("CUDNN failure 4: CUDNN_STATUS_INTERNAL_ERROR"), "CUDA libraries are missing", "CPU build"},
		{"empty message", filepath.Join(gpuBuild, "libonnxruntime.so.1"), errors.New(""), "could not create it", "CPU build"},
	} {
		err := cudaError(0, c.lib, c.err)
		if !errors.Is(err, ErrCUDAUnavailable) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.not) {
			t.Errorf("%s: %v; want %q and not %q", c.name, err, c.want, c.not)
		}
	}
}
