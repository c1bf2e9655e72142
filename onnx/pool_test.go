package onnx

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/vectest"
)

// TestPoolSharesBatches checks a Pool of two CPU Embedders of one session
// each: the vectors equal one session's bit for bit (int8, whose vectors
// depend on the batch, so the batches must be the same ones), and both
// sessions ran batches.
func TestPoolSharesBatches(t *testing.T) {
	opts := Options{TokenBudget: 600, Threads: 1}
	one := openModel(t, "all-minilm-l6-v2-int8", opts)
	a, b := openModel(t, "all-minilm-l6-v2-int8", opts), openModel(t, "all-minilm-l6-v2-int8", opts)
	p, err := NewPool(a, b)
	if err != nil {
		t.Fatal(err)
	}
	texts := append([]string{"short", "a somewhat longer query about protein folding"}, sampleTexts(t, 10)...)
	for _, role := range []Role{Query, Passage} {
		want, err := one.Embed(context.Background(), texts, role)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Embed(context.Background(), texts, role)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: pool vectors differ from one session's", role)
		}
	}
	st := p.Stats()
	total := one.Stats().Batches
	if st[0].Batches+st[1].Batches != total || st[0].Batches == 0 || st[1].Batches == 0 {
		t.Fatalf("batches per session %d, %d; one session ran %d", st[0].Batches, st[1].Batches, total)
	}
	if p.Sessions() != 2 || !slices.Equal(p.Devices(), []string{DeviceCPU, DeviceCPU}) {
		t.Fatalf("sessions %d, devices %v", p.Sessions(), p.Devices())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Embed(context.Background(), texts, Query); !errors.Is(err, ErrClosed) {
		t.Fatalf("embed after close: %v, want ErrClosed", err)
	}
}

func TestPoolErrors(t *testing.T) {
	dir := fetchedModel(t, "all-minilm-l6-v2-int8")
	for _, c := range []struct {
		devices []int
		device  string
		want    string
	}{
		{nil, DeviceCUDA, "at least one device"},
		{[]int{0, 0}, DeviceCUDA, "distinct"},
		{[]int{-1}, DeviceCUDA, "distinct"},
		{[]int{0, 1}, DeviceCPU, "needs device cuda or auto"},
		{[]int{0, 1}, "tpu", "want cpu, cuda or auto"},
	} {
		if _, err := OpenPool(dir, Options{Device: c.device}, c.devices); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("OpenPool(%v, %s): %v, want %q", c.devices, c.device, err, c.want)
		}
	}
	a := openModel(t, "all-minilm-l6-v2-int8", Options{})
	b := openModel(t, "all-minilm-l6-v2-int8", Options{TokenBudget: 100})
	if _, err := NewPool(a, b); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "batches by") {
		t.Errorf("NewPool with different budgets: %v", err)
	}
	c := openModel(t, "e5-small-v2-int8", Options{})
	if _, err := NewPool(a, c); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "is model") {
		t.Errorf("NewPool of two models: %v", err)
	}
	if cudaProviderBeside(LibraryPath()) {
		return
	}
	// A CPU-only library: cuda names the failing session; auto falls back to
	// one CPU Embedder (with its default sessions) and says so once.
	_, err := OpenPool(dir, Options{Device: DeviceCUDA}, []int{0, 1})
	if !errors.Is(err, ErrCUDAUnavailable) || !strings.Contains(err.Error(), "session 1 of 2 (device 0)") {
		t.Fatalf("cuda pool on a CPU build: %v", err)
	}
	var log strings.Builder
	p, err := OpenPool(dir, Options{Device: DeviceAuto, Log: &log}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if len(p.members) != 1 || p.Sessions() != p.members[0].Sessions() || p.Devices()[0] != DeviceCPU || strings.Count(log.String(), "using the cpu") != 1 {
		t.Fatalf("auto pool: %d sessions on %v, log %q", p.Sessions(), p.Devices(), log.String())
	}
}

// TestPoolCUDA runs one session per GPU where there are GPUs, against the CPU.
func TestPoolCUDA(t *testing.T) {
	needCUDA(t)
	devices := []int{0}
	if _, err := os.Stat("/dev/nvidia1"); err == nil {
		devices = append(devices, 1)
	}
	p, err := OpenPool(fetchedModel(t, cudaTestModel()), Options{Device: DeviceCUDA, TokenBudget: 600}, devices)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cpu := openModel(t, cudaTestModel(), Options{TokenBudget: 600})
	texts := sampleTexts(t, 12)
	want, err := cpu.Embed(context.Background(), texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Embed(context.Background(), texts, Passage)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		d := cpu.Dims()
		if c := vectest.Cosine(want[i*d:(i+1)*d], got[i*d:(i+1)*d]); c < 0.9999 {
			t.Fatalf("text %d: cosine cpu/gpu pool %.6f", i, c)
		}
	}
}
