package onnx

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/provenance"
)

// KindName is the name of the in-process ONNX kind in package embed's
// registry; an index records it in its model's origin.
const KindName = "onnx"

// Importing this package registers the kind: it is the default, taking
// every model name no other kind claims (a built-in or fetched model's name,
// a model directory).
func init() {
	embed.Register(embed.Kind{Name: KindName, Open: openKind, Reopen: reopenKind, Devices: true})
	provenance.RegisterRuntime("onnxruntime", RuntimeVersion)
}

// origin is the kind's parameters: the model's name, and its precision
// when it ran in fp16 (none: fp32, as in indices made before fp16 models).
type origin struct {
	Model     string   `json:"model"`
	Precision string   `json:"precision,omitempty"`
	Prompts   *Prompts `json:"prompts,omitempty"` // Options.Prompts, if given
}

// OptionsFrom maps kind-neutral options to this package's: the fields of an
// Options in o.Extra (FP16, MaxBatch, SkipVerify, Prompts) with o's device, threads,
// sessions, batch tokens, batching, log and offline over them.
func OptionsFrom(o embed.Options) (Options, error) {
	opts, _ := embed.ExtraOf[Options](o)
	b, err := ParseBatching(o.Batching)
	if err != nil {
		return opts, err
	}
	opts.Device, opts.DeviceID, opts.Threads, opts.Sessions, opts.Batching = o.Device, o.DeviceID, o.Threads, o.Sessions, b
	opts.TokenBudget, opts.Log, opts.Offline = o.BatchTokens, o.Log, o.Offline
	return opts, nil
}

// OpenModel opens a model by name (a built-in or fetched model, see
// ResolveModel) or model directory. A built-in model is fetched into the
// cache on its first use (EnsureModel, saying so on o.Log) unless o.Offline
// or $MSRAG_OFFLINE forbid it; so is its fp16 file made, with Options.FP16
// in o.Extra (EnsureFP16). With o.GPUs and device "cuda" or "auto", the
// model gets one session per GPU with the batches handed out as they come free
// (OpenPool); GPUs or a device number with device "cpu" are an error
// (embed.Options.Check). It is the kind's opener, what embed.Open calls for
// a name no other kind claims.
func OpenModel(ctx context.Context, name string, o embed.Options) (embed.Embedder, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	opts, err := OptionsFrom(o)
	if err != nil {
		return nil, err
	}
	fo := FetchOptions{Log: opts.Log, Offline: opts.Offline}
	dir, err := EnsureModel(ctx, name, fo)
	if err != nil {
		return nil, err
	}
	if opts.FP16 {
		if err := EnsureFP16(ctx, dir, fo); err != nil {
			return nil, err
		}
	}
	if len(o.GPUs) > 0 && (opts.Device == DeviceCUDA || opts.Device == DeviceAuto) {
		p, err := OpenPool(dir, opts, o.GPUs)
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	e, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func openKind(ctx context.Context, name string, o embed.Options) (embed.Embedder, error) {
	return OpenModel(ctx, name, o)
}

// reopenKind opens the model an origin names, in the precision it records:
// options asking for the other precision (Options.FP16 set or not) are an
// ErrPrecision error that says which the index was embedded in.
func reopenKind(ctx context.Context, or embed.Origin, o embed.Options) (embed.Embedder, error) {
	var p origin
	if err := json.Unmarshal([]byte(or.Params), &p); err != nil || p.Model == "" {
		return nil, fmt.Errorf("onnx: origin parameters %s: want {\"model\": NAME}", or.Params)
	}
	opts, err := OptionsFrom(o)
	if err != nil {
		return nil, err
	}
	if err := checkPrecision(p, opts.FP16); err != nil {
		return nil, err
	}
	if p.Prompts != nil { // the prefixes the vectors were embedded with
		extra, _ := embed.ExtraOf[Options](o)
		extra.Prompts = p.Prompts
		o.Extra = append([]any{extra}, o.Extra...)
	}
	return OpenModel(ctx, p.Model, o)
}

// checkPrecision fails unless fp16 asks for the precision the origin p records.
func checkPrecision(p origin, fp16 bool) error {
	have, want := p.Precision, precisionOf(fp16)
	if have == "" {
		have = PrecisionFP32
	}
	switch {
	case have != PrecisionFP32 && have != PrecisionFP16:
		return fmt.Errorf("onnx: model %s was run in precision %q, which this msrag does not know (want fp32 or fp16): %w", p.Model, p.Precision, ErrPrecision)
	case have == want:
		return nil
	case have == PrecisionFP16:
		return fmt.Errorf("onnx: the vectors were embedded with model %s in fp16 (%s), and this asks for fp32: give --fp16 (Options.FP16): %w",
			p.Model, FP16ModelFile, ErrPrecision)
	}
	return fmt.Errorf("onnx: the vectors were embedded with model %s in fp32 (%s), and this asks for fp16: leave out --fp16 (Options.FP16): %w",
		p.Model, ModelFile, ErrPrecision)
}

// originOf is the origin of a model of the spec: its name, its precision
// unless that is full, and the prompts given instead of its own.
func originOf(s embed.Spec, prompts *Prompts) embed.Origin {
	b, _ := json.Marshal(origin{Model: s.Name, Precision: s.Precision, Prompts: prompts}) // a struct of strings always encodes
	return embed.Origin{Kind: KindName, Params: string(b)}
}

// Origin says how to open the model again: by its name, in its precision,
// with the prompts it was given (embed.Originer).
func (e *Embedder) Origin() embed.Origin { return originOf(e.Spec(), e.prompts) }

// Origin says how to open the pool's model again: by its name, in its
// precision, with the prompts it was given (embed.Originer).
func (p *Pool) Origin() embed.Origin { return originOf(p.Spec(), p.members[0].prompts) }

// BatchingMode says how the model groups texts into runs: "padded" or
// "single" (embed.BatchingReporter).
func (e *Embedder) BatchingMode() string { return e.Batching().String() }

// BatchingMode says how the pool's sessions group texts into runs
// (embed.BatchingReporter).
func (p *Pool) BatchingMode() string { return p.Batching().String() }

var (
	_ embed.Originer         = (*Embedder)(nil)
	_ embed.Originer         = (*Pool)(nil)
	_ embed.BatchingReporter = (*Embedder)(nil)
	_ embed.BatchingReporter = (*Pool)(nil)
)
