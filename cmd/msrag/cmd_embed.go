package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/onnx"
)

// embedBlock is the number of texts read, embedded and written at a time: memory
// stays bounded whatever the input size.
const embedBlock = 4096

func init() {
	register(&cli.Command{
		Name:  "embed",
		Usage: "embed texts read from standard input, one vector per text in input order",
		Description: "Reads one JSON string per line (or, with --lines, one raw text per line) and writes one\n" +
			"vector per text: jsonl ({\"vector\": [...]} per line), npy (float32 [n, dims]) or parquet\n" +
			"(a fixed-size-list<float32> column \"vector\").",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Value: onnx.DefaultModel, Usage: "model name (see msrag model list) or model directory"},
			&cli.StringFlag{Name: "role", Value: "passage", Usage: "query or passage (chooses the model's prefix)"},
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "jsonl, npy or parquet"},
			&cli.StringFlag{Name: "out", Usage: "output file (default standard output)"},
			&cli.BoolFlag{Name: "lines", Usage: "read raw text lines instead of JSON strings"},
			&cli.BoolFlag{Name: "ids", Usage: "read token ids instead of texts: one JSON array of content ids per line (no prefix, no special tokens)"},
			&cli.BoolFlag{Name: "stats", Usage: "print tokens, padding and model time to standard error at the end"},
			&cli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, cuda or auto"},
			&cli.IntFlag{Name: "device-id", Usage: "CUDA device number"},
			&cli.IntFlag{Name: "threads", Usage: "ONNX Runtime intra-op threads (0: all cores)"},
			&cli.IntFlag{Name: "batch-tokens", Usage: "tokens per batch, padding included (0: default)"},
		},
		Action: embedAction,
	})
}

func embedAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("embed: takes no arguments; texts come from standard input")
	}
	role, err := onnx.ParseRole(c.String("role"))
	if err != nil {
		return usagef("embed: --role %q: want query or passage", c.String("role"))
	}
	format := c.String("format")
	switch format {
	case "jsonl", "npy", "parquet":
	default:
		return usagef("embed: --format %q: want jsonl, npy or parquet", format)
	}
	switch c.String("device") {
	case "cpu", "cuda", "auto":
	default:
		return usagef("embed: --device %q: want cpu, cuda or auto", c.String("device"))
	}
	dir, err := onnx.ResolveModel(c.String("model"))
	if err != nil {
		return err
	}
	emb, err := onnx.Open(dir, onnx.Options{
		Device:      c.String("device"),
		DeviceID:    c.Int("device-id"),
		Threads:     c.Int("threads"),
		TokenBudget: c.Int("batch-tokens"),
		Log:         c.App.ErrWriter,
	})
	if err != nil {
		return err
	}
	defer emb.Close()

	var out io.Writer = c.App.Writer
	var file *os.File
	if p := c.String("out"); p != "" {
		if file, err = os.Create(p); err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		defer file.Close()
		out = file
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	w, err := newVectorWriter(format, bw, file, emb.Dims())
	if err != nil {
		return err
	}
	if c.Bool("ids") && c.Bool("lines") {
		return usagef("embed: --ids and --lines exclude each other")
	}
	rd := newTextReader(c.App.Reader, c.Bool("lines"))
	for {
		var vecs []float32
		if c.Bool("ids") {
			seqs, err := rd.nextIDs(embedBlock)
			if err != nil {
				return err
			}
			if len(seqs) == 0 {
				break
			}
			if vecs, err = emb.EmbedTokens(c.Context, seqs, role); err != nil {
				return fmt.Errorf("embed: lines %d to %d: %w", rd.line-len(seqs)+1, rd.line, err)
			}
		} else {
			texts, err := rd.next(embedBlock)
			if err != nil {
				return err
			}
			if len(texts) == 0 {
				break
			}
			if vecs, err = emb.Embed(c.Context, texts, role); err != nil {
				return err
			}
		}
		if err := w.write(vecs); err != nil {
			return fmt.Errorf("embed: writing %s: %w", format, err)
		}
	}
	if err := w.close(); err != nil {
		return fmt.Errorf("embed: writing %s: %w", format, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	if c.Bool("stats") {
		st := emb.Stats()
		secs := st.RunTime.Seconds()
		fmt.Fprintf(c.App.ErrWriter, "embed: %d sequences, %d tokens, %d padded tokens (padding %.2f%% of tokens), %d batches, model time %.3fs, %.1f tokens/s, %.1f sequences/s\n",
			st.Sequences, st.Tokens, st.PaddedTokens, 100*float64(st.PaddedTokens-st.Tokens)/math.Max(float64(st.Tokens), 1),
			st.Batches, secs, float64(st.Tokens)/math.Max(secs, 1e-9), float64(st.Sequences)/math.Max(secs, 1e-9))
	}
	if file != nil {
		if w, ok := w.(*npyWriter); ok && w.seek {
			if err := w.patchHeader(file); err != nil {
				return fmt.Errorf("embed: writing npy: %w", err)
			}
		}
		return file.Close()
	}
	return nil
}

// textReader reads texts from standard input, one per line.
type textReader struct {
	sc    *bufio.Scanner
	lines bool
	line  int
}

func newTextReader(r io.Reader, lines bool) *textReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	return &textReader{sc: sc, lines: lines}
}

// next returns up to n texts; none at the end of the input.
func (r *textReader) next(n int) ([]string, error) {
	var texts []string
	for len(texts) < n && r.sc.Scan() {
		r.line++
		b := r.sc.Bytes()
		if r.lines {
			texts = append(texts, string(b))
			continue
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("embed: standard input line %d: want a JSON string (or use --lines): %v", r.line, err)
		}
		texts = append(texts, s)
	}
	if err := r.sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: reading standard input after line %d: %w", r.line, err)
	}
	return texts, nil
}

// nextIDs returns up to n id sequences; none at the end of the input.
func (r *textReader) nextIDs(n int) ([][]int32, error) {
	var seqs [][]int32
	for len(seqs) < n && r.sc.Scan() {
		r.line++
		var ids []int32
		if err := json.Unmarshal(r.sc.Bytes(), &ids); err != nil {
			return nil, fmt.Errorf("embed: standard input line %d: want a JSON array of token ids: %v", r.line, err)
		}
		seqs = append(seqs, ids)
	}
	if err := r.sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: reading standard input after line %d: %w", r.line, err)
	}
	return seqs, nil
}

// vectorWriter writes rows of float32 vectors in one output format.
type vectorWriter interface {
	write(vecs []float32) error
	close() error
}

func newVectorWriter(format string, w *bufio.Writer, file *os.File, dims int) (vectorWriter, error) {
	switch format {
	case "npy":
		nw := &npyWriter{w: w, dims: dims}
		if file != nil {
			if _, err := file.Seek(0, io.SeekCurrent); err == nil {
				nw.seek = true
			}
		}
		return nw, nw.start()
	case "parquet":
		return newParquetWriter(w, dims)
	}
	return &jsonlWriter{w: w, dims: dims}, nil
}

type jsonlWriter struct {
	w    *bufio.Writer
	dims int
	buf  []byte
}

func (j *jsonlWriter) write(vecs []float32) error {
	for i := 0; i < len(vecs); i += j.dims {
		b := append(j.buf[:0], `{"vector": [`...)
		for k, v := range vecs[i : i+j.dims] {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendFloat(b, float64(v), 'g', -1, 32)
		}
		b = append(b, "]}\n"...)
		j.buf = b
		if _, err := j.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (j *jsonlWriter) close() error { return nil }

// npyWriter writes a NumPy .npy file (format 1.0) of float32 [n, dims]. On a
// seekable file the header is written first with room for any row count and
// patched at the end; otherwise the rows are kept and written at close.
type npyWriter struct {
	w    *bufio.Writer
	dims int
	seek bool
	rows int
	held []float32
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

func (n *npyWriter) start() error {
	if !n.seek {
		return nil
	}
	_, err := n.w.Write(npyHeader(0, n.dims))
	return err
}

func (n *npyWriter) write(vecs []float32) error {
	if !n.seek {
		n.held = append(n.held, vecs...)
		return nil
	}
	n.rows += len(vecs) / n.dims
	return writeFloats(n.w, vecs)
}

func (n *npyWriter) close() error {
	if n.seek {
		return nil
	}
	if _, err := n.w.Write(npyHeader(len(n.held)/n.dims, n.dims)); err != nil {
		return err
	}
	return writeFloats(n.w, n.held)
}

func (n *npyWriter) patchHeader(f *os.File) error {
	_, err := f.WriteAt(npyHeader(n.rows, n.dims), 0)
	return err
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

// parquetWriter writes one row group per block, a column "vector" of
// fixed_size_list<float32>[dims].
type parquetWriter struct {
	fw   *pqarrow.FileWriter
	mem  memory.Allocator
	sc   *arrow.Schema
	dims int
}

func newParquetWriter(w io.Writer, dims int) (*parquetWriter, error) {
	sc := arrow.NewSchema([]arrow.Field{{
		Name: "vector",
		Type: arrow.FixedSizeListOfNonNullable(int32(dims), arrow.PrimitiveTypes.Float32),
	}}, nil)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, fmt.Errorf("embed: parquet writer: %w", err)
	}
	return &parquetWriter{fw: fw, mem: memory.DefaultAllocator, sc: sc, dims: dims}, nil
}

func (p *parquetWriter) write(vecs []float32) error {
	rec := vectorRecord(p.mem, p.sc, p.dims, vecs)
	defer rec.Release()
	return p.fw.Write(rec)
}

// vectorRecord builds a record of one "vector" column from row-major vectors.
func vectorRecord(mem memory.Allocator, sc *arrow.Schema, dims int, vecs []float32) arrow.RecordBatch {
	b := array.NewFixedSizeListBuilderWithField(mem, int32(dims), arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32})
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	rows := len(vecs) / dims
	for i := 0; i < rows; i++ {
		b.Append(true)
	}
	vb.AppendValues(vecs, nil)
	arr := b.NewArray()
	defer arr.Release()
	return array.NewRecordBatch(sc, []arrow.Array{arr}, int64(rows))
}

func (p *parquetWriter) close() error {
	if err := p.fw.Close(); err != nil {
		return err
	}
	return nil
}
