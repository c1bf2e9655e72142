package onnx

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// session is one ONNX Runtime session of an Embedder, with the buffers its
// runs reuse and the counters of its work. Its lock is held for the whole of
// a batch: filling the inputs, the run, and handing the output over, which
// the next run overwrites.
//
// The buffers are Go memory that ONNX Runtime reads and writes through the
// tensors of a run: pinned (pin) from the tensors' creation until they are
// destroyed, at the end of the run (see run).
type session struct {
	mu      sync.Mutex
	ort     *ort.DynamicAdvancedSession // nil once closed
	threads int                         // intra-op threads
	ids     []int64
	mask    []int64
	types   []int64
	out     []float32
	pin     runtime.Pinner // the buffers of the run in progress
	stats   Stats
}

// sessionThreads returns the intra-op threads of each session an Embedder
// opens on dev ("cpu" or "cuda"): o.Sessions sessions, or when that is 0 one
// per thread on the CPU with BatchingSingle and one otherwise, sharing
// o.Threads (0: cpus) as evenly as they can, each at least one.
func sessionThreads(o Options, dev string, b Batching, cpus int) []int {
	threads := o.Threads
	if threads <= 0 {
		threads = cpus
	}
	n := o.Sessions
	if n <= 0 {
		n = 1
		if dev == DeviceCPU && b == BatchingSingle {
			n = threads
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = threads / n
		if i < threads%n {
			out[i]++
		}
		out[i] = max(out[i], 1)
	}
	return out
}

// createSessions opens the sessions sessionThreads asks for on dev; on a
// failure it closes those it opened and returns the error.
func (e *Embedder) createSessions(dev string, opts Options) error {
	threads := sessionThreads(opts, dev, e.batching, runtime.NumCPU())
	for i, n := range threads {
		s, err := e.newSession(dev, opts, n)
		if err != nil {
			e.closeSessions()
			if len(threads) > 1 {
				err = fmt.Errorf("onnx: session %d of %d: %w", i+1, len(threads), err)
			}
			return err
		}
		e.sessions = append(e.sessions, s)
	}
	e.device = dev
	return nil
}

// newSession creates one ONNX Runtime session of the model on dev with
// threads intra-op threads.
func (e *Embedder) newSession(dev string, opts Options, threads int) (*session, error) {
	so, err := sessionOptions(opts, dev, threads)
	if err != nil {
		return nil, err
	}
	defer so.Destroy()
	s, err := ort.NewDynamicAdvancedSession(e.modelPath, e.inputs, []string{e.info.Output}, so)
	if err != nil {
		if dev == DeviceCUDA {
			return nil, cudaError(opts.DeviceID, envLib, err)
		}
		return nil, fmt.Errorf("onnx: creating session for %s: %v: %w", e.modelPath, err, ErrRuntime)
	}
	return &session{ort: s, threads: threads}, nil
}

// closeSessions closes every session of e, each once its batch in progress
// is done.
func (e *Embedder) closeSessions() error {
	return closeSessions(e.sessions)
}

// closeSessions closes every session of ss, each once its batch in
// progress is done, and returns the first error.
func closeSessions(ss []*session) error {
	var first error
	for _, s := range ss {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// close destroys the session once its batch in progress is done; it is safe
// to call twice.
func (s *session) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ort == nil {
		return nil
	}
	err := s.ort.Destroy()
	s.ort = nil
	if err != nil {
		return fmt.Errorf("onnx: closing session: %v: %w", err, ErrRuntime)
	}
	return nil
}

// runBatch runs the batch of sequences full[idx[...]] padded to seqLen on
// s, which the caller holds locked, and returns the model's output (valid
// until s's next run).
func (e *Embedder) runBatch(s *session, full [][]int32, idx []int, seqLen int) ([]float32, error) {
	if s.ort == nil {
		return nil, ErrClosed
	}
	e.fillInputs(s, full, idx, seqLen)
	states, err := e.run(s, idx, seqLen)
	if err != nil {
		return nil, err
	}
	for _, i := range idx {
		s.stats.Tokens += int64(len(full[i]))
	}
	return states, nil
}

// handOver gives each sequence of a batch run by runBatch its rows of the
// output, and its attention mask, through row.
func (e *Embedder) handOver(s *session, full [][]int32, idx []int, seqLen int, states []float32, row rowFunc) error {
	per := e.hidden
	if e.pooling != PoolNone {
		per = seqLen * e.hidden
	}
	for r, i := range idx {
		if err := row(i, states[r*per:(r+1)*per], s.mask[r*seqLen:(r+1)*seqLen]); err != nil {
			return err
		}
	}
	return nil
}

// fillInputs writes the padded ids, the attention mask and zero token types
// of a batch into s's reused input buffers.
func (e *Embedder) fillInputs(s *session, full [][]int32, idx []int, seqLen int) {
	size := len(idx) * seqLen
	s.ids = grow(s.ids, size)
	s.mask = grow(s.mask, size)
	s.types = grow(s.types, size)
	pad := int64(e.tok.PadID())
	for r, i := range idx {
		row := s.ids[r*seqLen : (r+1)*seqLen]
		mrow := s.mask[r*seqLen : (r+1)*seqLen]
		seq := full[i]
		for j := range row {
			if j < len(seq) {
				row[j], mrow[j] = int64(seq[j]), 1
			} else {
				row[j], mrow[j] = pad, 0
			}
		}
	}
	clear(s.types[:size])
}

// run runs s on its filled inputs, the sequences idx (of the call's order)
// of seqLen tokens, and returns its output (valid until the next run).
//
// The tensors of the run hand s's buffers to ONNX Runtime, which keeps
// pointers to them until the tensors are destroyed: each buffer is pinned
// with s.pin when its tensor is made (newTensor) and unpinned once every
// tensor is destroyed (the deferred calls run in reverse). The call's
// sequences never reach C: fillInputs copied them into s.ids and s.mask.
func (e *Embedder) run(s *session, idx []int, seqLen int) ([]float32, error) {
	n := len(idx)
	size := n * seqLen
	shape := ort.NewShape(int64(n), int64(seqLen))
	in := make([]ort.Value, len(e.inputs))
	defer s.pin.Unpin()
	defer func() {
		for _, v := range in {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	for k, name := range e.inputs {
		data := s.types[:size]
		switch name {
		case "input_ids":
			data = s.ids[:size]
		case "attention_mask":
			data = s.mask[:size]
		}
		t, err := newTensor(&s.pin, shape, data)
		if err != nil {
			return nil, fmt.Errorf("onnx: input tensor %s: %v: %w", name, err, ErrRuntime)
		}
		in[k] = t
	}
	outShape := ort.NewShape(int64(n), int64(seqLen), int64(e.hidden))
	if e.pooling == PoolNone {
		outShape = ort.NewShape(int64(n), int64(e.hidden))
	}
	s.out = grow(s.out, int(outShape.FlattenedSize()))
	ot, err := newTensor(&s.pin, outShape, s.out[:outShape.FlattenedSize()])
	if err != nil {
		return nil, fmt.Errorf("onnx: output tensor: %v: %w", err, ErrRuntime)
	}
	defer ot.Destroy()
	e.busy.Begin()
	start := time.Now()
	err = s.ort.Run(in, []ort.Value{ot})
	took := time.Since(start)
	e.busy.End()
	if err != nil {
		return nil, fmt.Errorf("onnx: running %s on %s: %v: %w", e.info.Name, batchName(idx, seqLen), err, ErrRuntime)
	}
	s.stats.RunTime += took
	s.stats.Batches++
	s.stats.Sequences += int64(n)
	s.stats.PaddedTokens += int64(size)
	return s.out[:outShape.FlattenedSize()], nil
}

// newTensor makes a tensor of shape over data, which it pins with p:
// ort.NewTensor hands &data[0] to ONNX Runtime, which keeps it until the
// tensor is destroyed, and cgo lets C keep a Go pointer only to pinned
// memory. The caller destroys the tensor, then unpins p. Every tensor of the
// package is made here (TestTensorsArePinned).
func newTensor[T ort.TensorData](p *runtime.Pinner, shape ort.Shape, data []T) (*ort.Tensor[T], error) {
	if len(data) > 0 {
		p.Pin(&data[0]) // pins the whole array
	}
	return ort.NewTensor(shape, data)
}

// batchName names a batch in an error: the sequence (counted from 0 in the
// call) when it is alone, else the batch's shape.
func batchName(idx []int, seqLen int) string {
	if len(idx) == 1 {
		return fmt.Sprintf("sequence %d (%d tokens)", idx[0], seqLen)
	}
	return fmt.Sprintf("a batch of %d x %d tokens", len(idx), seqLen)
}
