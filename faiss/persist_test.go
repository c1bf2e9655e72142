package faiss_test

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/faiss"
)

// persistCases are the index kinds msrag builds, small enough for quick tests.
var persistCases = []struct {
	factory string
	metric  faiss.Metric
	param   string
	value   float64
}{
	{"Flat", faiss.InnerProduct, "", 0},
	{"Flat", faiss.L2, "", 0},
	{"IVF8,Flat", faiss.L2, "nprobe", 3},
	{"HNSW8", faiss.InnerProduct, "efSearch", 16},
	{"IVF4,PQ1x4", faiss.L2, "nprobe", 2},
}

func TestPersistenceRoundTrip(t *testing.T) {
	const d, k = 8, 5
	xb := randVecs(t, 40, 400, d)
	xq := randVecs(t, 41, 30, d)
	for _, c := range persistCases {
		t.Run(c.factory+"/"+c.metric.String(), func(t *testing.T) {
			ix := newIndex(t, d, c.factory, c.metric, xb)
			if c.param != "" {
				if err := ix.SetParam(c.param, c.value); err != nil {
					t.Fatal(err)
				}
			}
			wantD, wantL, err := ix.Search(xq, k)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "index.faiss")
			if err := ix.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			b, err := ix.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			onDisk, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(onDisk) != string(b) {
				t.Fatalf("Bytes (%d) differs from the file WriteFile wrote (%d)", len(b), len(onDisk))
			}
			fromFile, err := faiss.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fromFile.Close()
			fromBytes, err := faiss.ReadBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			defer fromBytes.Close()
			for name, got := range map[string]*faiss.Index{"file": fromFile, "bytes": fromBytes} {
				if got.Dim() != d || got.Ntotal() != ix.Ntotal() || got.Metric() != c.metric || !got.IsTrained() {
					t.Fatalf("%s: dim %d ntotal %d metric %v trained %v", name, got.Dim(), got.Ntotal(), got.Metric(), got.IsTrained())
				}
				// Search-time parameters such as nprobe are stored with
				// IVF indices; HNSW's efSearch is not, so set it again.
				if c.param == "efSearch" {
					if err := got.SetParam(c.param, c.value); err != nil {
						t.Fatal(err)
					}
				}
				gotD, gotL, err := got.Search(xq, k)
				if err != nil {
					t.Fatal(err)
				}
				for i := range wantD {
					if gotD[i] != wantD[i] || gotL[i] != wantL[i] {
						t.Fatalf("%s: result %d = (%g, %d), before writing (%g, %d)", name, i, gotD[i], gotL[i], wantD[i], wantL[i])
					}
				}
			}
		})
	}
}

// readOK reads b as an index. A nil error is acceptable only if the index
// then searches without failing: a corrupt input must give an error, never
// a crash.
func readOK(tb testing.TB, b []byte, d int) error {
	ix, err := faiss.ReadBytes(b)
	if err != nil {
		if !errors.Is(err, faiss.ErrCorrupt) {
			tb.Fatalf("error %q does not wrap ErrCorrupt", err)
		}
		return err
	}
	defer ix.Close()
	q := make([]float32, 2*ix.Dim())
	if ix.IsTrained() {
		if _, _, err := ix.Search(q, 3); err != nil {
			return err
		}
	}
	return nil
}

func TestTruncatedIndex(t *testing.T) {
	const d = 8
	xb := randVecs(t, 42, 60, d)
	for _, c := range persistCases {
		t.Run(c.factory+"/"+c.metric.String(), func(t *testing.T) {
			ix := newIndex(t, d, c.factory, c.metric, xb)
			b, err := ix.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			// Every prefix of the serialised index is an error: all short
			// ones (the headers), then a sample.
			for n := 1; n < len(b); n += 1 + n/128 {
				if err := readOK(t, b[:n], d); err == nil {
					t.Fatalf("reading %d of %d bytes succeeded", n, len(b))
				}
			}
			// And through a file, which takes another reader.
			path := filepath.Join(t.TempDir(), "cut.faiss")
			if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := faiss.ReadFile(path); !errors.Is(err, faiss.ErrCorrupt) {
				t.Fatalf("reading a truncated file: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestCorruptIndex(t *testing.T) {
	const d = 8
	xb := randVecs(t, 43, 24, d)
	r := rand.New(rand.NewPCG(44, 0))
	for _, c := range persistCases {
		t.Run(c.factory+"/"+c.metric.String(), func(t *testing.T) {
			ix := newIndex(t, d, c.factory, c.metric, xb)
			b, err := ix.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			bad := make([]byte, len(b))
			// Huge counts in every 8-byte-aligned and unaligned slot:
			// FAISS would allocate for them before finding the input short.
			for off := 0; off+8 <= len(b); off++ {
				for _, v := range []uint64{1 << 33, 1 << 31} {
					copy(bad, b)
					binary.LittleEndian.PutUint64(bad[off:], v)
					readOK(t, bad, d)
				}
			}
			// Random byte and bit damage.
			for range 150 {
				copy(bad, b)
				for range 1 + r.IntN(4) {
					i := r.IntN(len(bad))
					if r.IntN(2) == 0 {
						bad[i] ^= 1 << r.IntN(8)
					} else {
						bad[i] = byte(r.IntN(256))
					}
				}
				readOK(t, bad, d)
			}
			// A wrong magic number is an error.
			copy(bad, b)
			copy(bad, "Zzzz")
			if err := readOK(t, bad, d); err == nil {
				t.Fatal("index with a bad magic number read without error")
			}
		})
	}
	if err := readOK(t, []byte("not an index at all"), d); err == nil {
		t.Fatal("garbage read without error")
	}
}

// TestCorruptShapes aims at the two defences that random damage may miss:
// a length that would make FAISS allocate gigabytes, and a product
// quantizer with zero sub-quantizers, which FAISS 1.7.3 divides by.
func TestCorruptShapes(t *testing.T) {
	const d = 8
	xb := randVecs(t, 45, 60, d)
	// Offsets in FAISS's format: a 4-byte type code, then the index header
	// (d int32, ntotal int64, two int64 placeholders, is_trained byte,
	// metric int32) is 37 bytes; a flat index's vector length and a
	// product quantizer's (d, M, nbits) follow it.
	const afterHeader = 4 + 4 + 8 + 8 + 8 + 1 + 4
	tests := []struct {
		name    string
		factory string
		off     int
		value   uint64
		msg     string
	}{
		{"flat length 4 GiB", "Flat", afterHeader, 1 << 30, "far more memory"},
		{"flat length 64 MiB", "Flat", afterHeader, 1 << 24, "far more memory"},
		{"pq zero sub-quantizers", "PQ1x4", afterHeader + 8, 0, "0 sub-quantizers"},
		{"pq 40 bits", "PQ1x4", afterHeader + 16, 40, "40 bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := newIndex(t, d, tt.factory, faiss.L2, xb)
			b, err := ix.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			binary.LittleEndian.PutUint64(b[tt.off:], tt.value)
			_, err = faiss.ReadBytes(b)
			if err == nil {
				t.Fatal("corrupt index read without error")
			}
			checkErr(t, err, faiss.ErrCorrupt, tt.msg)
			path := filepath.Join(t.TempDir(), "bad.faiss")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = faiss.ReadFile(path)
			if err == nil {
				t.Fatal("corrupt index file read without error")
			}
			checkErr(t, err, faiss.ErrCorrupt, tt.msg)
		})
	}
}
