package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/tokenizer"
)

// testModel returns the name of a fetched model for CLI tests; it skips when the
// model or the ONNX Runtime library is absent, unless CI is set.
func testModel(tb testing.TB) string {
	tb.Helper()
	const name = "all-minilm-l6-v2-int8"
	for _, p := range []string{filepath.Join(onnx.ModelsDir(), name, onnx.ModelFile), onnx.LibraryPath()} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("CI") == "" {
				tb.Skipf("%s absent (scripts/setup.sh)", p)
			}
			tb.Fatalf("%s absent under CI", p)
		}
	}
	return name
}

func parseJSONL(tb testing.TB, out string) [][]float32 {
	tb.Helper()
	var vecs [][]float32
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var row struct{ Vector []float32 }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			tb.Fatalf("output line %d: %v", i+1, err)
		}
		vecs = append(vecs, row.Vector)
	}
	return vecs
}

func TestEmbedFormats(t *testing.T) {
	model := testModel(t)
	stdin := "\"first text\"\n\"a second, longer text about cells\"\n\"\u00e9t\u00e9\"\n"
	code, out, errOut := runCLI(t, stdin, "embed", "--model", model, "--role", "query")
	if code != exitOK {
		t.Fatalf("embed jsonl: code %d: %s", code, errOut)
	}
	want := parseJSONL(t, out)
	if len(want) != 3 || len(want[0]) != 384 {
		t.Fatalf("jsonl: %d vectors of %d", len(want), len(want[0]))
	}
	// --lines reads raw text: the same texts give the same vectors.
	code, out, errOut = runCLI(t, "first text\na second, longer text about cells\n\u00e9t\u00e9\n", "embed", "--model", model, "--role", "query", "--lines")
	if code != exitOK {
		t.Fatalf("embed --lines: code %d: %s", code, errOut)
	}
	if got := parseJSONL(t, out); !equalVecs(got, want) {
		t.Fatal("--lines gives other vectors")
	}

	// --ids takes the tokenizer's content ids and gives the same vectors.
	dirModel, err := onnx.ResolveModel(model)
	if err != nil {
		t.Fatal(err)
	}
	emb, err := onnx.Open(dirModel, onnx.Options{SkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids strings.Builder
	for _, text := range []string{"first text", "a second, longer text about cells", "\u00e9t\u00e9"} {
		enc := emb.Tokenizer().EncodeWith(text, tokenizer.Options{NoSpecial: true, MaxLength: -1})
		b, _ := json.Marshal(enc.IDs)
		ids.Write(append(b, '\n'))
	}
	emb.Close()
	code, out, errOut = runCLI(t, ids.String(), "embed", "--model", model, "--role", "query", "--ids", "--stats")
	if code != exitOK || !strings.Contains(errOut, "3 sequences") {
		t.Fatalf("embed --ids: code %d: %s", code, errOut)
	}
	if got := parseJSONL(t, out); !equalVecs(got, want) {
		t.Fatal("--ids gives other vectors")
	}

	dir := t.TempDir()
	t.Run("npy file", func(t *testing.T) {
		p := filepath.Join(dir, "v.npy")
		if code, _, errOut := runCLI(t, stdin, "embed", "--model", model, "--role", "query", "--format", "npy", "--out", p); code != exitOK {
			t.Fatalf("code %d: %s", code, errOut)
		}
		data, _ := os.ReadFile(p)
		checkNPY(t, data, want)
	})
	t.Run("npy stdout", func(t *testing.T) {
		code, out, errOut := runCLI(t, stdin, "embed", "--model", model, "--role", "query", "--format", "npy")
		if code != exitOK {
			t.Fatalf("code %d: %s", code, errOut)
		}
		checkNPY(t, []byte(out), want)
	})
	t.Run("parquet", func(t *testing.T) {
		p := filepath.Join(dir, "v.parquet")
		if code, _, errOut := runCLI(t, stdin, "embed", "--model", model, "--role", "query", "--format", "parquet", "--out", p); code != exitOK {
			t.Fatalf("code %d: %s", code, errOut)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		rdr, err := file.OpenParquetFile(p, false)
		if err != nil {
			t.Fatal(err)
		}
		defer rdr.Close()
		fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, mem)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer tbl.Release()
		if tbl.NumRows() != 3 || tbl.Schema().Field(0).Name != "vector" {
			t.Fatalf("table %v with %d rows", tbl.Schema(), tbl.NumRows())
		}
		ft, ok := tbl.Schema().Field(0).Type.(*arrow.FixedSizeListType)
		if !ok || ft.Len() != 384 || ft.Elem().ID() != arrow.FLOAT32 {
			t.Fatalf("column type %v", tbl.Schema().Field(0).Type)
		}
		col := tbl.Column(0).Data().Chunk(0).(*array.FixedSizeList)
		vals := col.ListValues().(*array.Float32).Float32Values()
		var got [][]float32
		for i := 0; i < 3; i++ {
			got = append(got, vals[i*384:(i+1)*384])
		}
		if !equalVecs(got, want) {
			t.Fatal("parquet vectors differ from jsonl")
		}
	})
}

func checkNPY(tb testing.TB, data []byte, want [][]float32) {
	tb.Helper()
	if !bytes.HasPrefix(data, []byte("\x93NUMPY\x01\x00")) {
		tb.Fatalf("no npy magic: %q", data[:min(len(data), 10)])
	}
	hl := int(binary.LittleEndian.Uint16(data[8:10]))
	header := string(data[10 : 10+hl])
	if !strings.Contains(header, "'descr': '<f4'") || !strings.Contains(header, "'shape': (3, 384)") || (10+hl)%64 != 0 {
		tb.Fatalf("npy header %q", header)
	}
	body := data[10+hl:]
	if len(body) != 3*384*4 {
		tb.Fatalf("npy body %d bytes", len(body))
	}
	var got [][]float32
	for i := 0; i < 3; i++ {
		row := make([]float32, 384)
		for k := range row {
			row[k] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*(i*384+k):]))
		}
		got = append(got, row)
	}
	if !equalVecs(got, want) {
		tb.Fatal("npy vectors differ from jsonl")
	}
}

func equalVecs(a, b [][]float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for k := range a[i] {
			if a[i][k] != b[i][k] {
				return false
			}
		}
	}
	return true
}

func TestEmbedErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		msg   string
		model bool
	}{
		{"bad format", "", []string{"--format", "csv"}, exitUsage, "--format", false},
		{"bad role", "", []string{"--role", "doc"}, exitUsage, "--role", false},
		{"bad device", "", []string{"--device", "tpu"}, exitUsage, "--device", false},
		{"argument", "", []string{"extra"}, exitUsage, "standard input", false},
		{"unknown model", "", []string{"--model", "no-such-model"}, exitFailure, "no-such-model", false},
		{"not json", "\"ok\"\nnot json\n", nil, exitFailure, "line 2", true},
		{"ids not ints", "[1, 2]\n[1, \"x\"]\n", []string{"--ids"}, exitFailure, "line 2", true},
		{"ids and lines", "", []string{"--ids", "--lines"}, exitUsage, "exclude", true},
		{"negative id", "[1, 2]\n[7, -3]\n", []string{"--ids"}, exitFailure, "line 2: token id -3 (position 1) is outside the tokenizer's vocabulary of 30522 ids", true},
		{"id past the vocabulary", "[30522]\n", []string{"--ids"}, exitFailure, "line 1: token id 30522 (position 0) is outside", true},
		{"cuda on cpu build", "\"x\"\n", []string{"--device", "cuda"}, exitFailure, "cuda", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"embed"}
			if tc.model {
				args = append(args, "--model", testModel(t))
				if tc.name == "cuda on cpu build" {
					if _, err := os.Stat(filepath.Join(filepath.Dir(onnx.LibraryPath()), "libonnxruntime_providers_cuda.so")); err == nil {
						t.Skip("library has a CUDA provider")
					}
				}
			}
			code, _, errOut := runCLI(t, tc.stdin, append(args, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("code %d (want %d), stderr %q (want %q)", code, tc.code, errOut, tc.msg)
			}
		})
	}
}

func TestModelList(t *testing.T) {
	code, out, errOut := runCLI(t, "", "model", "list")
	if code != exitOK {
		t.Fatalf("code %d: %s", code, errOut)
	}
	for _, want := range []string{"e5-small-v2 ", "all-minilm-l6-v2 ", "bge-small-en-v1.5 ", "(default)", "POOLING"} {
		if !strings.Contains(out, want) {
			t.Fatalf("model list lacks %q:\n%s", want, out)
		}
	}
	if code, _, _ := runCLI(t, "", "model", "fetch"); code != exitUsage {
		t.Fatalf("model fetch without a name: code %d", code)
	}
	if code, _, errOut := runCLI(t, "", "model", "fetch", "no-such-model"); code != exitFailure || !strings.Contains(errOut, "no-such-model") {
		t.Fatalf("model fetch no-such-model: code %d, %s", code, errOut)
	}
}
