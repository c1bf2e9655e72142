package faiss_test

import (
	"testing"

	"github.com/msrag/msrag/faiss"
)

// FuzzReadBytes feeds damaged serialised indices to ReadBytes: it must return
// an error or an index that searches, never crash the process.
func FuzzReadBytes(f *testing.F) {
	const d = 4
	xb := randVecs(f, 80, 16, d)
	for _, factory := range []string{"Flat", "IVF2,Flat", "HNSW4"} {
		ix := newIndex(f, d, factory, faiss.L2, xb)
		b, err := ix.Bytes()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readOK(t, b, d)
	})
}
