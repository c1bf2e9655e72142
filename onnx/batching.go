package onnx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
)

// Batching says how an Embedder groups sequences into model runs. It matters
// for dynamically quantized (int8) models: they compute their activation
// scales over a whole input tensor, every row and the padding with it, so a
// text's vector depends on which texts share its run. A model without dynamic
// quantization gives the same vector either way.
type Batching int

const (
	// BatchingAuto is BatchingSingle for a dynamically quantized model and
	// BatchingPadded for any other; it is the zero value.
	BatchingAuto Batching = iota
	// BatchingPadded runs length-sorted batches padded to their longest
	// sequence (TokenBudget, MaxBatch): fastest, and for a dynamically
	// quantized model a vector depends on its batch.
	BatchingPadded
	// BatchingSingle runs one sequence at a time, without padding: a text's
	// vector never depends on the other texts of a call, so sharded builds,
	// query batch sizes and reruns give bit-identical vectors.
	BatchingSingle
)

var batchingNames = [...]string{BatchingAuto: "auto", BatchingPadded: "padded", BatchingSingle: "single"}

// String returns "auto", "padded" or "single".
func (b Batching) String() string {
	if b < 0 || int(b) >= len(batchingNames) {
		return fmt.Sprintf("Batching(%d)", int(b))
	}
	return batchingNames[b]
}

// ParseBatching parses "auto" (or ""), "padded" or "single".
func ParseBatching(s string) (Batching, error) {
	if s == "" {
		return BatchingAuto, nil
	}
	for b, name := range batchingNames {
		if s == name {
			return Batching(b), nil
		}
	}
	return 0, fmt.Errorf("onnx: batching %q: want auto, padded or single: %w", s, ErrInput)
}

// resolve returns the batching auto stands for, given whether the model is
// dynamically quantized.
func (b Batching) resolve(dynamicQuant bool) Batching {
	if b != BatchingAuto {
		return b
	}
	if dynamicQuant {
		return BatchingSingle
	}
	return BatchingPadded
}

// ONNX protobuf field numbers (onnx.proto): ModelProto.graph,
// GraphProto.node, NodeProto.op_type.
const (
	pbModelGraph = 7
	pbGraphNode  = 1
	pbNodeOpType = 4
)

// DynamicallyQuantized reports whether the ONNX model file at path has a node
// whose operator quantizes activations at run time (DynamicQuantizeLinear,
// DynamicQuantizeMatMul, ...), as int8 exports by onnxruntime's
// quantize_dynamic do. It reads the main graph's node list only, skipping the
// weights.
func DynamicallyQuantized(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("onnx: %v: %w", err, ErrModelFiles)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("onnx: %v: %w", err, ErrModelFiles)
	}
	found := false
	err = pbFields(f, 0, st.Size(), func(field int, off, n int64) error {
		if field != pbModelGraph {
			return nil
		}
		return pbFields(f, off, off+n, func(field int, off, n int64) error {
			if field != pbGraphNode || found {
				return nil
			}
			node := make([]byte, n)
			if _, err := f.ReadAt(node, off); err != nil {
				return err
			}
			return pbFields(bytes.NewReader(node), 0, n, func(field int, o, l int64) error {
				if field == pbNodeOpType && strings.HasPrefix(string(node[o:o+l]), "DynamicQuantize") {
					found = true
				}
				return nil
			})
		})
	})
	if err != nil {
		return false, fmt.Errorf("onnx: reading the graph of %s: %v: %w", path, err, ErrModelFiles)
	}
	return found, nil
}

// pbFields walks the protobuf fields of r[off:end] and calls fn with the
// field number, offset and length of every length-delimited one; it skips
// the others.
func pbFields(r io.ReaderAt, off, end int64, fn func(field int, off, n int64) error) error {
	var buf [binary.MaxVarintLen64]byte
	varint := func() (uint64, error) {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
		if n == 0 && err != nil {
			return 0, err
		}
		v, k := binary.Uvarint(buf[:n])
		if k <= 0 {
			return 0, fmt.Errorf("bad varint at byte %d", off)
		}
		off += int64(k)
		return v, nil
	}
	for off < end {
		key, err := varint()
		if err != nil {
			return err
		}
		field, wire := int(key>>3), key&7
		switch wire {
		case 0:
			if _, err := varint(); err != nil {
				return err
			}
		case 1:
			off += 8
		case 5:
			off += 4
		case 2:
			n, err := varint()
			if err != nil {
				return err
			}
			if n > uint64(end-off) {
				return fmt.Errorf("field %d at byte %d: length %d runs past the end", field, off, n)
			}
			if err := fn(field, off, int64(n)); err != nil {
				return err
			}
			off += int64(n)
		default:
			return fmt.Errorf("field %d at byte %d: wire type %d", field, off, wire)
		}
	}
	if off != end {
		return fmt.Errorf("message ends at byte %d, past %d", off, end)
	}
	return nil
}
