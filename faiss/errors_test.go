package faiss_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msrag/msrag/faiss"
)

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		dim     int
		factory string
		metric  faiss.Metric
		want    error
		msg     string
	}{
		{"zero dim", 0, "Flat", faiss.L2, faiss.ErrArgument, "dimension 0"},
		{"negative dim", -3, "Flat", faiss.L2, faiss.ErrArgument, "dimension -3"},
		{"empty factory", 8, "", faiss.L2, faiss.ErrArgument, "empty factory"},
		{"unknown metric", 8, "Flat", faiss.Metric(7), faiss.ErrArgument, "metric(7)"},
		{"bad factory", 8, "NoSuchIndex", faiss.L2, faiss.ErrArgument, "NoSuchIndex"},
		{"PQ not dividing dim", 10, "PQ3", faiss.L2, faiss.ErrArgument, "PQ3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := faiss.New(tt.dim, tt.factory, tt.metric)
			if err == nil {
				ix.Close()
				t.Fatal("no error")
			}
			checkErr(t, err, tt.want, tt.msg)
		})
	}
}

func checkErr(tb testing.TB, err, want error, msg string) {
	tb.Helper()
	if !errors.Is(err, want) {
		tb.Fatalf("error %q does not wrap %q", err, want)
	}
	if !strings.HasPrefix(err.Error(), "faiss: ") || !strings.Contains(err.Error(), msg) {
		tb.Fatalf("error %q: want prefix \"faiss: \" and %q", err, msg)
	}
}

func TestMethodErrors(t *testing.T) {
	const d = 8
	xb := randVecs(t, 20, 300, d)
	flat := newIndex(t, d, "Flat", faiss.L2, xb)
	ivf, err := faiss.New(d, "IVF8,Flat", faiss.L2)
	if err != nil {
		t.Fatal(err)
	}
	defer ivf.Close()
	closed := newIndex(t, d, "Flat", faiss.L2, xb)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	dist := make([]float32, 3)
	labels := make([]int64, 3)

	tests := []struct {
		name string
		call func() error
		want error
		msg  string
	}{
		{"add ragged", func() error { return flat.Add(xb[:d+1]) }, faiss.ErrArgument, "9 floats is not a multiple of dimension 8"},
		{"train ragged", func() error { return flat.Train(xb[:3]) }, faiss.ErrArgument, "not a multiple"},
		{"train empty", func() error { return flat.Train(nil) }, faiss.ErrArgument, "no training vectors"},
		{"search ragged", func() error { _, _, err := flat.Search(xb[:d-1], 1); return err }, faiss.ErrArgument, "not a multiple"},
		{"search k=0", func() error { _, _, err := flat.Search(xb[:d], 0); return err }, faiss.ErrArgument, "k = 0 < 1"},
		{"search k<0", func() error { _, _, err := flat.Search(xb[:d], -2); return err }, faiss.ErrArgument, "k = -2 < 1"},
		{"search into short", func() error { return flat.SearchInto(xb[:d], 4, dist, labels) }, faiss.ErrArgument, "need 4"},
		{"param empty", func() error { return flat.SetParam("", 1) }, faiss.ErrArgument, "empty name"},
		{"param unknown", func() error { return ivf.SetParam("noSuchParam", 1) }, faiss.ErrNative, "noSuchParam"},
		{"nprobe on flat", func() error { return flat.SetParam("nprobe", 4) }, faiss.ErrNative, "nprobe"},
		{"add untrained", func() error { return ivf.Add(xb) }, faiss.ErrNotTrained, "call Train first"},
		{"search untrained", func() error { _, _, err := ivf.Search(xb[:d], 1); return err }, faiss.ErrNotTrained, "call Train first"},
		{"train too few", func() error { return ivf.Train(xb[:4*d]) }, faiss.ErrNative, "train on 4 vectors"},
		{"closed add", func() error { return closed.Add(xb) }, faiss.ErrClosed, "add"},
		{"closed train", func() error { return closed.Train(xb) }, faiss.ErrClosed, "train"},
		{"closed search", func() error { _, _, err := closed.Search(xb[:d], 1); return err }, faiss.ErrClosed, "search"},
		{"closed reset", func() error { return closed.Reset() }, faiss.ErrClosed, "reset"},
		{"closed param", func() error { return closed.SetParam("nprobe", 1) }, faiss.ErrClosed, "nprobe"},
		{"closed write", func() error { return closed.WriteFile(filepath.Join(t.TempDir(), "x")) }, faiss.ErrClosed, "write"},
		{"closed bytes", func() error { _, err := closed.Bytes(); return err }, faiss.ErrClosed, "bytes"},
		{"write bad dir", func() error { return flat.WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir")) }, fs.ErrNotExist, "no/such/dir"},
		{"read missing", func() error { _, err := faiss.ReadFile(filepath.Join(t.TempDir(), "missing")); return err }, fs.ErrNotExist, "missing"},
		{"read dir", func() error { _, err := faiss.ReadFile(t.TempDir()); return err }, fs.ErrInvalid, "read"},
		{"read empty bytes", func() error { _, err := faiss.ReadBytes(nil); return err }, faiss.ErrCorrupt, "empty input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil {
				t.Fatal("no error")
			}
			checkErr(t, err, tt.want, tt.msg)
		})
	}
	if closed.Ntotal() != 0 || closed.IsTrained() {
		t.Error("closed index reports vectors or training")
	}
}

func TestCloseTwice(t *testing.T) {
	ix, err := faiss.New(4, "Flat", faiss.InnerProduct)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := ix.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	var nilIndex *faiss.Index
	if err := nilIndex.Close(); err != nil {
		t.Fatalf("Close on nil: %v", err)
	}
}
