package onnx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParseBatching(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Batching
	}{{"", BatchingAuto}, {"auto", BatchingAuto}, {"padded", BatchingPadded}, {"single", BatchingSingle}} {
		got, err := ParseBatching(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseBatching(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	if _, err := ParseBatching("fixed"); !errors.Is(err, ErrInput) {
		t.Errorf("ParseBatching(fixed) = %v, want ErrInput", err)
	}
}

// TestDynamicallyQuantized reads the graphs of the fetched built-in models:
// the -int8 ones are onnxruntime quantize_dynamic exports (models.json), the
// others fp32.
func TestDynamicallyQuantized(t *testing.T) {
	for _, name := range []string{"all-minilm-l6-v2", "all-minilm-l6-v2-int8", "e5-small-v2-int8", "bge-small-en-v1.5"} {
		t.Run(name, func(t *testing.T) {
			got, err := DynamicallyQuantized(filepath.Join(fetchedModel(t, name), ModelFile))
			if err != nil {
				t.Fatal(err)
			}
			if want := len(name) > 5 && name[len(name)-5:] == "-int8"; got != want {
				t.Fatalf("DynamicallyQuantized = %v, want %v", got, want)
			}
		})
	}
}

func TestDynamicallyQuantizedBadFile(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"truncated.onnx": {0x3a, 0x20, 0x0a}, // graph field of 32 bytes, 1 present
		"group.onnx":     {0x0b},             // wire type 3
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := DynamicallyQuantized(path); !errors.Is(err, ErrModelFiles) {
			t.Errorf("%s: err = %v, want ErrModelFiles", name, err)
		}
	}
	if _, err := DynamicallyQuantized(filepath.Join(dir, "absent.onnx")); !errors.Is(err, ErrModelFiles) {
		t.Errorf("absent file: err = %v, want ErrModelFiles", err)
	}
}

// TestSingleBatchingExact checks that with the default batching an int8
// model gives a text bit-identical vectors alone, in a batch and in another
// order.
func TestSingleBatchingExact(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2-int8", Options{})
	if e.Batching() != BatchingSingle {
		t.Fatalf("Batching() = %v, want single for an int8 model", e.Batching())
	}
	texts := append([]string{"short", "a somewhat longer query about protein folding"}, sampleTexts(t, 6)...)
	ctx := context.Background()
	all, err := e.Embed(ctx, texts, Query)
	if err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(texts)
	slices.Reverse(rev)
	back, err := e.Embed(ctx, rev, Query)
	if err != nil {
		t.Fatal(err)
	}
	d := e.Dims()
	for i := range texts {
		one, err := e.Embed(ctx, texts[i:i+1], Query)
		if err != nil {
			t.Fatal(err)
		}
		j := len(texts) - 1 - i
		if !slices.Equal(one, all[i*d:(i+1)*d]) || !slices.Equal(one, back[j*d:(j+1)*d]) {
			t.Fatalf("text %d: vector alone differs from its vector in a batch", i)
		}
	}
	if s := e.Stats(); s.Batches != s.Sequences || s.PaddedTokens != s.Tokens {
		t.Fatalf("stats %+v: want one unpadded sequence per run", s)
	}
}

// TestEqualLengthBatchesMix records why BatchingSingle runs one sequence at a
// time rather than batches of equal length (no padding): an int8 model's
// activation scale is one per tensor, so even rows of one length change each
// other's vectors.
func TestEqualLengthBatchesMix(t *testing.T) {
	e := openModel(t, "all-minilm-l6-v2-int8", Options{Batching: BatchingPadded})
	texts := sampleTexts(t, 8)
	if len(texts) < 8 {
		t.Skip("no SciFact data")
	}
	seqs, err := e.contentSeqs(texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	for i := range seqs {
		seqs[i] = seqs[i][:32] // every row 32 content tokens: no padding
	}
	ctx := context.Background()
	all, err := e.EmbedTokens(ctx, seqs, Passage)
	if err != nil {
		t.Fatal(err)
	}
	d, differ := e.Dims(), 0
	for i := range seqs {
		one, err := e.EmbedTokens(ctx, seqs[i:i+1], Passage)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(one, all[i*d:(i+1)*d]) {
			differ++
		}
	}
	t.Logf("%d of %d equal-length rows differ alone and in one batch", differ, len(seqs))
	if differ == 0 {
		t.Fatal("equal-length rows gave identical vectors alone and batched: batches without padding would be exact (see BatchingSingle)")
	}
}
