package onnx

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/tokenizer"
)

// Pool embeds with several Embedders of one model, typically one per GPU:
// the batches of every call are planned as one Embedder plans them and
// handed out to the sessions of all of them, each taking the next batch as
// soon as it is free, and the sessions run at the same time. Vectors are the
// same as one session's (each batch is the same batch). A Pool is safe for
// concurrent use; Close closes every Embedder.
type Pool struct {
	members []*Embedder
}

// OpenPool opens the model in modelDir once per device in devices, each
// as Open(modelDir, opts) with Device "cuda" and that DeviceID (opts'
// DeviceID is ignored). With opts.Device "auto" the first device is tried
// with "auto": when it falls back to the CPU, the Pool is that one CPU
// Embedder (with its sessions, Options.Sessions). Device "cpu" with more than
// one device is an error: Options.Sessions shares one CPU among sessions.
func OpenPool(modelDir string, opts Options, devices []int) (*Pool, error) {
	if len(devices) == 0 {
		return nil, fmt.Errorf("onnx: a pool needs at least one device: %w", ErrInput)
	}
	seen := map[int]bool{}
	for _, d := range devices {
		if d < 0 || seen[d] {
			return nil, fmt.Errorf("onnx: devices %v: each must be a distinct device number >= 0: %w", devices, ErrInput)
		}
		seen[d] = true
	}
	switch opts.Device {
	case DeviceCUDA, DeviceAuto:
	case "", DeviceCPU:
		if len(devices) > 1 {
			return nil, fmt.Errorf("onnx: devices %v with device cpu: one session per GPU needs device cuda or auto: %w", devices, ErrInput)
		}
	default:
		return nil, fmt.Errorf("onnx: device %q: want cpu, cuda or auto: %w", opts.Device, ErrInput)
	}
	p := &Pool{}
	for i, d := range devices {
		o := opts
		o.DeviceID = d
		if i > 0 && opts.Device == DeviceAuto {
			o.Device = DeviceCUDA
		}
		if i > 0 {
			o.SkipVerify = true // the files were checked by the first Open
		}
		e, err := Open(modelDir, o)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("onnx: session %d of %d (device %d): %w", i+1, len(devices), d, err)
		}
		p.members = append(p.members, e)
		if i == 0 && e.Device() == DeviceCPU {
			break // auto fell back; more CPU sessions would not help
		}
	}
	return p, nil
}

// NewPool makes a Pool of already open sessions of the same model (same
// files, batching and device kind). The Pool owns them: its Close closes them.
func NewPool(members ...*Embedder) (*Pool, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("onnx: a pool needs at least one session: %w", ErrInput)
	}
	a := members[0]
	for i, e := range members[1:] {
		if !maps.Equal(e.sums, a.sums) || e.info.Name != a.info.Name {
			return nil, fmt.Errorf("onnx: pool session %d is model %s, session 1 is %s: %w", i+2, e.info.Name, a.info.Name, ErrInput)
		}
		if e.batching != a.batching {
			return nil, fmt.Errorf("onnx: pool session %d batching %v, session 1 %v: %w", i+2, e.batching, a.batching, ErrInput)
		}
		if e.budget != a.budget || e.maxBatch != a.maxBatch {
			return nil, fmt.Errorf("onnx: pool session %d batches by %d tokens / %d sequences, session 1 by %d / %d: %w",
				i+2, e.budget, e.maxBatch, a.budget, a.maxBatch, ErrInput)
		}
	}
	return &Pool{members: members}, nil
}

// Sessions returns the number of sessions of all the Embedders.
func (p *Pool) Sessions() int { return len(p.workers()) }

// Devices returns each session's device ("cpu" or "cuda").
func (p *Pool) Devices() []string {
	var out []string
	for _, w := range p.workers() {
		out = append(out, w.e.Device())
	}
	return out
}

// workers returns the sessions of every Embedder, in order.
func (p *Pool) workers() []worker {
	var ws []worker
	for _, e := range p.members {
		ws = append(ws, e.workers()...)
	}
	return ws
}

// Close closes every session; it is safe to call twice.
func (p *Pool) Close() error {
	var errs []error
	for _, e := range p.members {
		errs = append(errs, e.Close())
	}
	return errors.Join(errs...)
}

// Info returns the model's description.
func (p *Pool) Info() ModelInfo { return p.members[0].Info() }

// Dims returns the size of an embedding.
func (p *Pool) Dims() int { return p.members[0].Dims() }

// MaxTokens returns the most tokens the model takes.
func (p *Pool) MaxTokens() int { return p.members[0].MaxTokens() }

// PrefixTokens returns the number of tokens of the role's prefix.
func (p *Pool) PrefixTokens(r Role) int { return p.members[0].PrefixTokens(r) }

// Batching returns how the sessions group sequences into runs.
func (p *Pool) Batching() Batching { return p.members[0].Batching() }

// Tokenizer returns the model's tokenizer.
func (p *Pool) Tokenizer() *tokenizer.Tokenizer { return p.members[0].Tokenizer() }

// Checksums returns the sha256 of the model files by file name.
func (p *Pool) Checksums() map[string]string { return p.members[0].Checksums() }

// Stats returns the counters of every Embedder, in order.
func (p *Pool) Stats() []Stats {
	out := make([]Stats, len(p.members))
	for i, e := range p.members {
		out[i] = e.Stats()
	}
	return out
}

// Spec describes the model (embed.Embedder).
func (p *Pool) Spec() embed.Spec { return p.members[0].Spec() }

// EmbedChunks embeds document chunks from their token ids, as EmbedTokens.
func (p *Pool) EmbedChunks(ctx context.Context, chunks []embed.Chunk, role Role) ([]float32, error) {
	return p.EmbedTokens(ctx, chunkIDs(chunks), role)
}

// Embed embeds texts as Embedder.Embed does, over the pool's sessions.
func (p *Pool) Embed(ctx context.Context, texts []string, role Role) ([]float32, error) {
	seqs, err := p.members[0].contentSeqs(texts, role)
	if err != nil {
		return nil, err
	}
	return p.EmbedTokens(ctx, seqs, role)
}

// EmbedTokens embeds content ids as Embedder.EmbedTokens does, over the
// pool's sessions.
func (p *Pool) EmbedTokens(ctx context.Context, seqs [][]int32, role Role) ([]float32, error) {
	a := p.members[0]
	full, err := a.fullSeqs(seqs, role)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(full)*a.info.Dims)
	if err := runAll(ctx, p.workers(), full, func(e *Embedder) rowFunc { return e.pooler(out) }, false); err != nil {
		return nil, err
	}
	return out, nil
}
