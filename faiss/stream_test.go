package faiss_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"testing"
	"testing/iotest"

	"github.com/msrag/msrag/faiss"
)

func TestWriteToReadFromRoundTrip(t *testing.T) {
	const d, k = 8, 5
	xb := randVecs(t, 50, 300, d)
	xq := randVecs(t, 51, 12, d)
	for _, c := range persistCases {
		t.Run(c.factory+"/"+c.metric.String(), func(t *testing.T) {
			ix := newIndex(t, d, c.factory, c.metric, xb)
			want, err := ix.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			n, err := ix.WriteTo(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(buf.Len()) || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("WriteTo wrote %d bytes (reported %d), want the %d bytes of Bytes", buf.Len(), n, len(want))
			}
			// One byte per Read: the reader must cope with short reads.
			got, err := faiss.ReadFrom(iotest.OneByteReader(bytes.NewReader(want)), int64(len(want)))
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			if c.param != "" {
				ix.SetParam(c.param, c.value)
				got.SetParam(c.param, c.value)
			}
			wd, wl, _ := ix.Search(xq, k)
			gd, gl, err := got.Search(xq, k)
			if err != nil {
				t.Fatal(err)
			}
			for i := range wd {
				if wl[i] != gl[i] || math.Float32bits(wd[i]) != math.Float32bits(gd[i]) {
					t.Fatalf("hit %d: (%d, %v) after the round trip, want (%d, %v)", i, gl[i], gd[i], wl[i], wd[i])
				}
			}
		})
	}
}

// failAfter fails every Write or Read once n bytes have passed.
type failAfter struct {
	n   int
	r   io.Reader
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	p = p[:min(len(p), f.n)]
	k, err := f.r.Read(p)
	f.n -= k
	return k, err
}

func TestStreamErrorsAreReturned(t *testing.T) {
	const d = 8
	ix := newIndex(t, d, "Flat", faiss.InnerProduct, randVecs(t, 52, 200, d))
	b, err := ix.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if _, err := ix.WriteTo(&failAfter{n: 100, err: boom}); !errors.Is(err, boom) {
		t.Errorf("WriteTo with a failing writer: %v, want it to wrap %v", err, boom)
	}
	cut := errors.New("connection reset")
	if _, err := faiss.ReadFrom(&failAfter{n: 1000, r: bytes.NewReader(b), err: cut}, int64(len(b))); !errors.Is(err, cut) {
		t.Errorf("ReadFrom with a failing reader: %v, want it to wrap %v", err, cut)
	}
	if _, err := faiss.ReadFrom(bytes.NewReader(b[:len(b)/2]), int64(len(b))); !errors.Is(err, faiss.ErrCorrupt) {
		t.Errorf("ReadFrom of half an index: %v, want ErrCorrupt", err)
	}
	if _, err := faiss.ReadFrom(bytes.NewReader(b), int64(len(b)-4)); !errors.Is(err, faiss.ErrCorrupt) {
		t.Errorf("ReadFrom with a size short of the index: %v, want ErrCorrupt", err)
	}
}

// TestRescoreIsCanonical checks that rescored scores do not depend on the
// batch a query came in nor on how the vectors were split between indices,
// and that they are FAISS's scores of the same pairs but for rounding (their
// bits are rescore.golden.json's: TestRescoreGolden).
func TestRescoreIsCanonical(t *testing.T) {
	const d, k = 64, 10
	xb := randVecs(t, 53, 3000, d)
	for _, m := range []faiss.Metric{faiss.InnerProduct, faiss.L2} {
		whole := newIndex(t, d, "Flat", m, xb)
		half := newIndex(t, d, "Flat", m, xb[:1500*d])
		if !whole.Flat() {
			t.Fatal("Flat() is false for a Flat index")
		}
		queries := randVecs(t, 54, 64, d)
		dist, labels, err := whole.Search(queries, k)
		if err != nil {
			t.Fatal(err)
		}
		re, err := whole.Rescore(queries, labels, k)
		if err != nil {
			t.Fatal(err)
		}
		for q := range 64 {
			one := queries[q*d : (q+1)*d]
			sd, sl, _ := whole.Search(one, 2*k) // one query: below the BLAS threshold
			alone := map[int64]float32{}
			for j := range 2 * k {
				alone[sl[j]] = sd[j]
			}
			for j := range k {
				i := q*k + j
				s, ok := alone[labels[i]]
				if !ok {
					t.Fatalf("%v query %d: label %d of the batch is not in the top %d of the query alone", m, q, labels[i], 2*k)
				}
				if diff := math.Abs(float64(re[i] - s)); diff > 1e-5*max(1, math.Abs(float64(s))) {
					t.Fatalf("%v query %d hit %d: rescored %v, one query alone %v (batch %v)", m, q, j, re[i], s, dist[i])
				}
			}
			// The same pairs from the half index (labels < 1500) and from a
			// batch of one give the same bits.
			r1, err := half.Rescore(one, clampLabels(labels[q*k:(q+1)*k], 1500), k)
			if err != nil {
				t.Fatal(err)
			}
			for j := range k {
				if l := labels[q*k+j]; l < 1500 && math.Float32bits(r1[j]) != math.Float32bits(re[q*k+j]) {
					t.Fatalf("%v query %d label %d: %x in the half index, %x in the whole", m, q, l, math.Float32bits(r1[j]), math.Float32bits(re[q*k+j]))
				}
			}
		}
	}
	hnsw := newIndex(t, d, "HNSW8", faiss.InnerProduct, xb[:200*d])
	if hnsw.Flat() {
		t.Error("Flat() is true for HNSW")
	}
	if _, err := hnsw.Rescore(xb[:d], make([]int64, 3), 3); !errors.Is(err, faiss.ErrArgument) {
		t.Errorf("rescoring HNSW: %v, want ErrArgument", err)
	}
	if _, err := newIndex(t, d, "Flat", faiss.InnerProduct, xb[:10*d]).Rescore(xb[:d], make([]int64, 4), 3); !errors.Is(err, faiss.ErrArgument) {
		t.Errorf("wrong label count: %v, want ErrArgument", err)
	}
}

// clampLabels returns labels with those >= n replaced by -1.
func clampLabels(labels []int64, n int64) []int64 {
	out := make([]int64, len(labels))
	for i, l := range labels {
		out[i] = l
		if l >= n {
			out[i] = -1
		}
	}
	return out
}
