package output

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/msrag/msrag/internal/parquetio"
)

// VectorFormat is a format of embeddings.
type VectorFormat int

const (
	// VectorJSONL is one {"vector": [...]} line per vector.
	VectorJSONL VectorFormat = iota
	// NPY is a NumPy .npy file (format 1.0) of float32 [n, dims].
	NPY
	// VectorParquet is a Parquet file with one fixed_size_list<float32>[dims]
	// column "vector", a row group per Write.
	VectorParquet
)

var vectorFormats = []string{"jsonl", "npy", "parquet"}

func (f VectorFormat) String() string { return vectorFormats[f] }

// ParseVectorFormat parses "jsonl", "npy" or "parquet".
func ParseVectorFormat(s string) (VectorFormat, error) {
	for i, n := range vectorFormats {
		if s == n {
			return VectorFormat(i), nil
		}
	}
	return 0, fmt.Errorf("output: format %q: want jsonl, npy or parquet", s)
}

// VectorWriter writes rows of float32 vectors of one size.
type VectorWriter struct {
	f    VectorFormat
	w    io.Writer
	seek io.WriterAt // npy: where the header is patched at Close; nil: held
	dims int
	rows int
	held []float32
	buf  []byte
	pq   *pqarrow.FileWriter
	sc   *arrow.Schema
}

// NewVectorWriter writes vectors of dims floats in format f to w. For npy,
// when at is not nil (the file behind w, positioned at its start) the header
// is written first and patched at Close; otherwise the vectors are held and
// written at Close, since the header needs their count.
func NewVectorWriter(w io.Writer, at io.WriterAt, f VectorFormat, dims int) (*VectorWriter, error) {
	vw := &VectorWriter{f: f, w: w, seek: at, dims: dims}
	switch f {
	case NPY:
		if at != nil {
			if _, err := w.Write(npyHeader(0, dims)); err != nil {
				return nil, err
			}
		}
	case VectorParquet:
		vw.sc = arrow.NewSchema([]arrow.Field{{Name: "vector", Type: arrow.FixedSizeListOfNonNullable(int32(dims), arrow.PrimitiveTypes.Float32)}}, nil)
		pw, err := parquetio.NewWriter(w, vw.sc)
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		vw.pq = pw
	}
	return vw, nil
}

// Write writes rows of vectors (len(vecs) a multiple of dims).
func (vw *VectorWriter) Write(vecs []float32) error {
	if len(vecs)%vw.dims != 0 {
		return fmt.Errorf("output: %d floats is not a whole number of %d-dim vectors", len(vecs), vw.dims)
	}
	switch vw.f {
	case NPY:
		if vw.seek == nil {
			vw.held = append(vw.held, vecs...)
			return nil
		}
		vw.rows += len(vecs) / vw.dims
		return writeFloats(vw.w, vecs)
	case VectorParquet:
		rec := vectorRecord(vw.sc, vw.dims, vecs)
		defer rec.Release()
		return vw.pq.Write(rec)
	}
	return vw.writeJSONL(vecs)
}

func (vw *VectorWriter) writeJSONL(vecs []float32) error {
	for i := 0; i < len(vecs); i += vw.dims {
		b := append(vw.buf[:0], `{"vector": [`...)
		for k, v := range vecs[i : i+vw.dims] {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
		}
		b = append(b, "]}\n"...)
		vw.buf = b
		if _, err := vw.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// Close finishes the output: the held npy vectors, the npy header's row count
// or the Parquet footer. It does not close w. A seekable npy output must be
// flushed before Close patches its header.
func (vw *VectorWriter) Close() error {
	switch vw.f {
	case NPY:
		if vw.seek != nil {
			_, err := vw.seek.WriteAt(npyHeader(vw.rows, vw.dims), 0)
			return err
		}
		if _, err := vw.w.Write(npyHeader(len(vw.held)/vw.dims, vw.dims)); err != nil {
			return err
		}
		return writeFloats(vw.w, vw.held)
	case VectorParquet:
		return vw.pq.Close()
	}
	return nil
}

const npyHeaderLen = 128 // magic + version + length + dict, padded

func npyHeader(rows, dims int) []byte {
	dict := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, dims)
	h := make([]byte, 0, npyHeaderLen)
	h = append(h, "\x93NUMPY\x01\x00"...)
	h = binary.LittleEndian.AppendUint16(h, npyHeaderLen-10)
	h = append(h, dict...)
	for len(h) < npyHeaderLen-1 {
		h = append(h, ' ')
	}
	return append(h, '\n')
}

func writeFloats(w io.Writer, vecs []float32) error {
	var b [4096]byte
	for len(vecs) > 0 {
		k := min(len(vecs), len(b)/4)
		for i, v := range vecs[:k] {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		if _, err := w.Write(b[:4*k]); err != nil {
			return err
		}
		vecs = vecs[k:]
	}
	return nil
}

// vectorRecord builds a record of one "vector" column from row-major vectors.
func vectorRecord(sc *arrow.Schema, dims int, vecs []float32) arrow.RecordBatch {
	b := array.NewFixedSizeListBuilderWithField(memory.DefaultAllocator, int32(dims), arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32})
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	rows := len(vecs) / dims
	for range rows {
		b.Append(true)
	}
	vb.AppendValues(vecs, nil)
	arr := b.NewArray()
	defer arr.Release()
	return array.NewRecordBatch(sc, []arrow.Array{arr}, int64(rows))
}
