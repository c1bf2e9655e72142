package onnx

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/clock"
	"github.com/msrag/msrag/tokenizer"
)

// Default batching limits.
const (
	// DefaultTokenBudget is the default number of tokens per batch, padding
	// included (batch size x longest sequence in the batch).
	DefaultTokenBudget = 8192
	// DefaultMaxBatch is the default most sequences per batch.
	DefaultMaxBatch = 256
)

// Options configure an Embedder. The zero value runs on the CPU with all cores,
// verifies the model files' checksums, and batches by DefaultTokenBudget (one
// sequence per run and one session per core for a dynamically quantized
// model).
type Options struct {
	// Device is "cpu" (or empty), "cuda", or "auto" (CUDA if it can be had,
	// else the CPU, saying so once on Log).
	Device string
	// DeviceID is the CUDA device number.
	DeviceID int
	// FP16 uses the model directory's model_fp16.onnx (EnsureFP16 makes it)
	// instead of model.onnx, on any device: it is meant for GPUs, whose
	// tensor cores run fp16; on the CPU, ONNX Runtime runs it too, slower than
	// fp32. An index records the precision (embed.Spec.Precision) and is
	// searched only in it.
	FP16 bool
	// Threads is the number of ONNX Runtime intra-op threads of all the
	// sessions together, shared among them as evenly as they can be, each
	// session at least one; 0 means all cores.
	Threads int
	// Sessions is the number of ONNX Runtime sessions of the model: the
	// batches of a call are handed out to them as they come free and run at
	// the same time, and each sequence's vector is the same whichever session
	// runs it. 0 chooses from the device and the batching: on the CPU with
	// BatchingSingle, one session per thread, each of one intra-op thread (a
	// single short sequence is too small a product for several threads to
	// share); otherwise one session with all the threads. Each session holds
	// its own copy of the model.
	Sessions int
	// TokenBudget caps batch size x padded length; 0 means DefaultTokenBudget.
	TokenBudget int
	// MaxBatch caps the sequences in a batch; 0 means DefaultMaxBatch.
	MaxBatch int
	// Batching says how sequences are grouped into model runs; the zero
	// value, BatchingAuto, runs a dynamically quantized model one sequence
	// at a time (so its vectors do not depend on the batch) and any other
	// in padded batches.
	Batching Batching
	// SkipVerify skips the sha256 check of the model files when opening (which
	// reads the whole model once).
	SkipVerify bool
	// Log receives notices such as the CPU fall back of "auto"; nil discards them.
	Log io.Writer
	// Offline keeps OpenModel (msrag.OpenEmbedder) from fetching a built-in model on its
	// first use (EnsureModel); Open itself never fetches.
	Offline bool
	// Prompts, when set, are the prefixes instead of msrag-model.json's:
	// an MTEB run takes those mteb's model metadata gives the model for the
	// task. The embedder's origin records them, so that reopening it for an
	// index embeds queries with the same ones.
	Prompts *Prompts
}

// Prompts are the query and passage prefixes of a run, and where they came
// from.
type Prompts struct {
	Query   string `json:"query"`
	Passage string `json:"passage"`
	Source  string `json:"source"`
}

// Embedder turns texts or token ids into embeddings with an ONNX model; it is
// an embed.Embedder. It runs one or more ONNX Runtime sessions of the model
// (Options.Sessions), each running one batch at a time on its intra-op
// threads. It is safe for concurrent use: the batches of concurrent calls
// share the sessions. Close releases the native sessions; an Embedder
// dropped without Close has them released by a cleanup once it is collected.
type Embedder struct {
	info      ModelInfo
	dir       string
	modelPath string
	fp16      bool // modelPath is model_fp16.onnx
	device    string
	tok       *tokenizer.Tokenizer
	prefix    [2][]int32 // prefix content ids by Role
	lead      int        // special tokens the tokenizer puts before the content
	budget    int
	maxBatch  int
	batching  Batching // resolved: BatchingPadded or BatchingSingle

	sessions []*session
	inputs   []string // input names, in the order of the tensors passed to Run
	pooling  Pooling
	prompts  *Prompts // Options.Prompts, nil for msrag-model.json's prefixes
	hidden   int      // size of the output's last dimension
	mu       sync.Mutex
	closed   bool
	cleanup  runtime.Cleanup // closes the sessions of an Embedder dropped without Close
	busy     clock.Busy
	sums     map[string]string
}

// Open loads the model in modelDir (model.onnx, tokenizer.json, msrag-model.json),
// checks its files against the recorded sha256 sums, and creates the ONNX Runtime
// sessions (Options.Sessions) on the device opts asks for. The first Open in a
// process loads the ONNX Runtime library (see LibraryPath). The caller must Close
// the Embedder.
func Open(modelDir string, opts Options) (*Embedder, error) {
	info, err := ReadModelInfo(modelDir)
	if err != nil {
		return nil, err
	}
	if p := opts.Prompts; p != nil {
		info.QueryPrefix, info.PassagePrefix = p.Query, p.Passage
	}
	e := &Embedder{info: info, dir: modelDir, budget: opts.TokenBudget, maxBatch: opts.MaxBatch, pooling: info.Pooling, prompts: opts.Prompts}
	if e.budget <= 0 {
		e.budget = DefaultTokenBudget
	}
	if e.maxBatch <= 0 {
		e.maxBatch = DefaultMaxBatch
	}
	e.modelPath = filepath.Join(modelDir, ModelFile)
	device := opts.Device
	if device == "" {
		device = DeviceCPU
	}
	switch device {
	case DeviceCPU, DeviceCUDA, DeviceAuto:
	default:
		return nil, fmt.Errorf("onnx: device %q: want cpu, cuda or auto: %w", opts.Device, ErrInput)
	}
	if opts.Sessions < 0 {
		return nil, fmt.Errorf("onnx: %d sessions: want 0 (chosen from the device and batching) or more: %w", opts.Sessions, ErrInput)
	}
	if opts.FP16 {
		e.modelPath, e.fp16 = filepath.Join(modelDir, FP16ModelFile), true
		if _, err := os.Stat(e.modelPath); err != nil {
			return nil, fmt.Errorf("onnx: model %s has no fp16 file (%v): make it with: msrag model fetch %s --fp16: %w",
				info.Name, err, info.Name, ErrModelFiles)
		}
	}
	for _, p := range []string{e.modelPath, filepath.Join(modelDir, TokenizerFile)} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("onnx: model %s: %v: %w", info.Name, err, ErrModelFiles)
		}
	}
	e.sums = usedSums(info, opts.FP16)
	if !opts.SkipVerify {
		if err := verifyNamed(modelDir, info, slices.Collect(maps.Keys(e.sums))); err != nil {
			return nil, err
		}
	}
	if err := e.setBatching(opts.Batching); err != nil {
		return nil, err
	}

	tok, err := tokenizer.Load(filepath.Join(modelDir, TokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("onnx: model %s: %w: %w", info.Name, err, ErrModelFiles)
	}
	e.tok = tok
	for _, r := range []Role{Passage, Query} {
		if p := info.Prefix(r); p != "" {
			e.prefix[r] = tok.EncodeWith(p, tokenizer.Options{NoSpecial: true, MaxLength: -1}).IDs
		}
	}
	e.lead = leadingSpecials(tok)
	if n := tok.NumSpecialTokens() + max(len(e.prefix[0]), len(e.prefix[1])); n >= info.MaxTokens {
		return nil, fmt.Errorf("onnx: model %s: prefix and special tokens (%d) leave no room in %d tokens: %w",
			info.Name, n, info.MaxTokens, ErrModelFiles)
	}

	if err := initRuntime(); err != nil {
		return nil, err
	}
	if err := e.openSession(device, opts); err != nil {
		return nil, err
	}
	e.cleanup = runtime.AddCleanup(e, closeDropped, e.sessions)
	return e, nil
}

// usedSums returns the recorded sha256 of the files a model of the
// precision loads: model.onnx or model_fp16.onnx, and the tokenizer.
func usedSums(info ModelInfo, fp16 bool) map[string]string {
	unused := FP16ModelFile
	if fp16 {
		unused = ModelFile
	}
	out := make(map[string]string, len(info.SHA256))
	for name, sum := range info.SHA256 {
		if name != unused {
			out[name] = sum
		}
	}
	return out
}

// closeDropped closes the sessions of an Embedder that became unreachable
// without Close: a safety net, which Close stops. It must not refer to the
// Embedder, or the Embedder would stay reachable for good.
func closeDropped(ss []*session) { closeSessions(ss) }

// setBatching resolves the batching opts asks for against the model file.
func (e *Embedder) setBatching(b Batching) error {
	if b < BatchingAuto || b > BatchingSingle {
		return fmt.Errorf("onnx: %v: want auto, padded or single: %w", b, ErrInput)
	}
	dyn := false
	if b == BatchingAuto {
		var err error
		if dyn, err = DynamicallyQuantized(e.modelPath); err != nil {
			return err
		}
	}
	e.batching = b.resolve(dyn)
	return nil
}

// leadingSpecials counts the special tokens the tokenizer puts in front of
// a sequence's content.
func leadingSpecials(tok *tokenizer.Tokenizer) int {
	enc := tok.AddSpecial([]int32{tok.PadID()})
	n := 0
	for n < len(enc.SpecialTokensMask) && enc.SpecialTokensMask[n] == 1 {
		n++
	}
	return n
}

// openSession reads the model's inputs and outputs and creates the sessions.
func (e *Embedder) openSession(device string, opts Options) error {
	ins, outs, err := ort.GetInputOutputInfo(e.modelPath)
	if err != nil {
		return fmt.Errorf("onnx: reading %s: %v: %w", e.modelPath, err, ErrModelFiles)
	}
	if err := e.readInputs(ins); err != nil {
		return err
	}
	if err := e.readOutput(outs); err != nil {
		return err
	}
	if device == DeviceAuto {
		err := e.createSessions(DeviceCUDA, opts)
		if err == nil {
			return nil
		}
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "onnx: device auto: using the cpu, because %v\n", err)
		}
		device = DeviceCPU
	}
	return e.createSessions(device, opts)
}

// readInputs checks the model's inputs (BERT's, int64) and records them in
// the order Run takes them.
func (e *Embedder) readInputs(ins []ort.InputOutputInfo) error {
	for _, in := range ins {
		switch in.Name {
		case "input_ids", "attention_mask", "token_type_ids":
		default:
			return fmt.Errorf("onnx: %s: unexpected input %q (want input_ids, attention_mask, token_type_ids): %w",
				e.modelPath, in.Name, ErrModelFiles)
		}
		if in.DataType != ort.TensorElementDataTypeInt64 {
			return fmt.Errorf("onnx: %s: input %s is %v, want int64: %w", e.modelPath, in.Name, in.DataType, ErrModelFiles)
		}
		e.inputs = append(e.inputs, in.Name)
	}
	if !hasInput(e.inputs, "input_ids") {
		return fmt.Errorf("onnx: %s: no input_ids input: %w", e.modelPath, ErrModelFiles)
	}
	return nil
}

// readOutput finds the output msrag-model.json names, checks its type and
// shape (per token, or pooled) and its size against the recorded dims.
func (e *Embedder) readOutput(outs []ort.InputOutputInfo) error {
	i := slices.IndexFunc(outs, func(o ort.InputOutputInfo) bool { return o.Name == e.info.Output })
	if i < 0 {
		names := make([]string, len(outs))
		for j, o := range outs {
			names[j] = o.Name
		}
		return fmt.Errorf("onnx: %s: no output %q (outputs: %v): %w", e.modelPath, e.info.Output, names, ErrModelFiles)
	}
	out := outs[i]
	if out.DataType != ort.TensorElementDataTypeFloat {
		return fmt.Errorf("onnx: %s: output %s is %v, want float32: %w", e.modelPath, out.Name, out.DataType, ErrModelFiles)
	}
	d := out.Dimensions
	switch {
	case len(d) == 2:
		e.pooling = PoolNone
	case len(d) == 3 && e.pooling == PoolNone:
		return fmt.Errorf("onnx: %s: output %s has one vector per token, but pooling is none: %w", e.modelPath, out.Name, ErrModelFiles)
	case len(d) != 3:
		return fmt.Errorf("onnx: %s: output %s has shape %v, want [batch, seq, dims] or [batch, dims]: %w", e.modelPath, out.Name, d, ErrModelFiles)
	}
	e.hidden = int(d[len(d)-1])
	switch {
	case e.hidden <= 0:
		return fmt.Errorf("onnx: %s: output %s has no fixed last dimension: %w", e.modelPath, e.info.Output, ErrModelFiles)
	case e.info.Dims == 0:
		e.info.Dims = e.hidden
	case e.info.Dims != e.hidden:
		return fmt.Errorf("onnx: %s: output %s has %d dims, %s says %d: %w",
			e.modelPath, e.info.Output, e.hidden, InfoFile, e.info.Dims, ErrModelFiles)
	}
	return nil
}

func hasInput(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// Close releases the sessions, each once its batch in progress is done. It is
// safe to call twice; calls after it fail with ErrClosed.
func (e *Embedder) Close() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	e.cleanup.Stop()
	return e.closeSessions()
}

// Info returns the model's description.
func (e *Embedder) Info() ModelInfo { return e.info.clone() }

// Dir returns the model directory.
func (e *Embedder) Dir() string { return e.dir }

// Dims returns the size of an embedding.
func (e *Embedder) Dims() int { return e.info.Dims }

// MaxTokens returns the most tokens the model takes, prefix and special tokens
// included.
func (e *Embedder) MaxTokens() int { return e.info.MaxTokens }

// MaxContentTokens returns the most content tokens a text of the role can have:
// MaxTokens less the prefix and the special tokens.
func (e *Embedder) MaxContentTokens(r Role) int {
	return e.info.MaxTokens - e.tok.NumSpecialTokens() - e.PrefixTokens(r)
}

// PrefixTokens returns the number of tokens of the role's prefix.
func (e *Embedder) PrefixTokens(r Role) int {
	if r != Query && r != Passage {
		return 0
	}
	return len(e.prefix[r])
}

// Tokenizer returns the model's tokenizer.
func (e *Embedder) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// Device returns the device the sessions run on: "cpu" or "cuda".
func (e *Embedder) Device() string { return e.device }

// Sessions returns the number of ONNX Runtime sessions.
func (e *Embedder) Sessions() int { return len(e.sessions) }

// Threads returns each session's intra-op thread count.
func (e *Embedder) Threads() []int {
	out := make([]int, len(e.sessions))
	for i, s := range e.sessions {
		out[i] = s.threads
	}
	return out
}

// Batching returns how sequences are grouped into runs: BatchingPadded or
// BatchingSingle (Options' BatchingAuto resolved for the model).
func (e *Embedder) Batching() Batching { return e.batching }

// Checksums returns the sha256 (hex) of the model files it loaded, by file
// name (model.onnx, or model_fp16.onnx with Options.FP16, and tokenizer.json), as recorded in msrag-model.json and checked by Open
// unless Options.SkipVerify.
func (e *Embedder) Checksums() map[string]string {
	out := make(map[string]string, len(e.sums))
	for k, v := range e.sums {
		out[k] = v
	}
	return out
}

// Spec describes the model as plain data (embed.Embedder).
func (e *Embedder) Spec() embed.Spec {
	return embed.Spec{
		Name: e.info.Name, Checksums: e.Checksums(), Dims: e.info.Dims, MaxTokens: e.info.MaxTokens,
		SpecialTokens: e.tok.NumSpecialTokens(), Pooling: e.info.Pooling, Normalize: e.info.Normalize,
		QueryPrefix: e.info.QueryPrefix, PassagePrefix: e.info.PassagePrefix,
		PrefixTokens: [2]int{len(e.prefix[Passage]), len(e.prefix[Query])},
		Precision:    e.precision(),
	}
}

// precision is Spec.Precision: "fp16" for model_fp16.onnx, "" (full
// precision) for model.onnx.
func (e *Embedder) precision() string {
	if e.fp16 {
		return PrecisionFP16
	}
	return ""
}

// EmbedChunks embeds document chunks from their token ids, as EmbedTokens
// (embed.Embedder); their texts are not used.
func (e *Embedder) EmbedChunks(ctx context.Context, chunks []embed.Chunk, role Role) ([]float32, error) {
	return e.EmbedTokens(ctx, chunkIDs(chunks), role)
}

func chunkIDs(chunks []embed.Chunk) [][]int32 {
	seqs := make([][]int32, len(chunks))
	for i, c := range chunks {
		seqs[i] = c.IDs
	}
	return seqs
}

// Embed embeds texts and returns len(texts) rows of Dims() float32, row-major.
// The role's prefix goes in front of every text, and a text longer than the model
// takes is truncated to MaxTokens (prefix and special tokens included), as the
// model's tokenizer would.
func (e *Embedder) Embed(ctx context.Context, texts []string, role Role) ([]float32, error) {
	seqs, err := e.contentSeqs(texts, role)
	if err != nil {
		return nil, err
	}
	return e.EmbedTokens(ctx, seqs, role)
}

// contentSeqs tokenizes texts without special tokens and truncates each to
// what the role leaves room for.
func (e *Embedder) contentSeqs(texts []string, role Role) ([][]int32, error) {
	if role != Query && role != Passage {
		return nil, fmt.Errorf("onnx: %v: %w", role, ErrInput)
	}
	encs := e.tok.EncodeBatch(texts, tokenizer.Options{NoSpecial: true, MaxLength: -1})
	keep := e.MaxContentTokens(role)
	seqs := make([][]int32, len(encs))
	for i, enc := range encs {
		ids := enc.IDs
		if len(ids) > keep {
			ids = ids[:keep]
		}
		seqs[i] = ids
	}
	return seqs, nil
}

// EmbedTokens embeds already tokenized texts: seqs holds content ids (no special
// tokens, no prefix), as the Tokenizer encodes with NoSpecial. It puts the role's
// prefix ids in front and adds the special tokens with the tokenizer's
// AddSpecial. For WordPiece models whose prefix ends in whitespace this equals
// encoding prefix+text (the tests check it). A sequence that does not fit
// MaxContentTokens(role) is an error naming it; nothing is truncated here.
func (e *Embedder) EmbedTokens(ctx context.Context, seqs [][]int32, role Role) ([]float32, error) {
	full, err := e.fullSeqs(seqs, role)
	if err != nil {
		return nil, err
	}
	return e.embedFull(ctx, full)
}

// fullSeqs puts the role's prefix and the special tokens around content ids.
func (e *Embedder) fullSeqs(seqs [][]int32, role Role) ([][]int32, error) {
	if role != Query && role != Passage {
		return nil, fmt.Errorf("onnx: %v: %w", role, ErrInput)
	}
	keep := e.MaxContentTokens(role)
	full := make([][]int32, len(seqs))
	buf := make([]int32, 0, len(e.prefix[role])+64)
	for i, s := range seqs {
		if len(s) > keep {
			return nil, fmt.Errorf("onnx: sequence %d has %d tokens, model %s takes %d with the %s prefix: %w",
				i, len(s), e.info.Name, keep, role, ErrInput)
		}
		buf = append(buf[:0], e.prefix[role]...)
		buf = append(buf, s...)
		full[i] = e.tok.AddSpecial(buf).IDs
	}
	return full, nil
}

// Stats are counters of the work an Embedder has done since it was opened,
// summed over its sessions.
type Stats struct {
	Sequences    int64         // sequences embedded
	Tokens       int64         // real tokens, prefix and special tokens included
	PaddedTokens int64         // tokens run through the model, padding included
	Batches      int64         // model runs
	RunTime      time.Duration // time spent in the model runs, each session's added up
	Busy         time.Duration // wall time during which at least one session ran
}

// add adds o's counters to st's.
func (st *Stats) add(o Stats) {
	st.Sequences += o.Sequences
	st.Tokens += o.Tokens
	st.PaddedTokens += o.PaddedTokens
	st.Batches += o.Batches
	st.RunTime += o.RunTime
}

// Stats returns the counters of the work done so far.
func (e *Embedder) Stats() Stats {
	var st Stats
	for _, s := range e.sessions {
		s.mu.Lock()
		st.add(s.stats)
		s.mu.Unlock()
	}
	st.Busy = e.busy.Elapsed()
	return st
}

// batch is a run of sequences [lo, hi) of the length-sorted order.
type batch struct{ lo, hi, seqLen int }

// maxPadding caps the padding of a batch: padded tokens over real tokens.
const maxPadding = 0.05

// planBatches sorts sequence indices by length (longest first, stable) and cuts
// them into batches: a batch grows while its size x longest length stays within
// budget, its size within maxBatch, and its padding within maxPadding of its real
// tokens. A sequence longer than budget gets a batch alone.
func planBatches(lens []int, budget, maxBatch int) (order []int, batches []batch) {
	order = make([]int, len(lens))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return lens[order[a]] > lens[order[b]] })
	for lo := 0; lo < len(order); {
		seqLen := max(lens[order[lo]], 1)
		hi, real := lo+1, lens[order[lo]]
		for hi < len(order) && hi-lo < maxBatch && (hi-lo+1)*seqLen <= budget {
			r := real + lens[order[hi]]
			if float64((hi-lo+1)*seqLen-r) > maxPadding*float64(r) {
				break
			}
			hi, real = hi+1, r
		}
		batches = append(batches, batch{lo, hi, seqLen})
		lo = hi
	}
	return order, batches
}

// plan cuts sequences of the given lengths into batches as the Embedder's
// batching says: planBatches, with one sequence per batch for BatchingSingle.
func (e *Embedder) plan(lens []int) (order []int, batches []batch) {
	maxBatch := e.maxBatch
	if e.batching == BatchingSingle {
		maxBatch = 1
	}
	return planBatches(lens, e.budget, maxBatch)
}

// embedFull embeds complete id sequences (specials and prefix included).
func (e *Embedder) embedFull(ctx context.Context, full [][]int32) ([]float32, error) {
	out := make([]float32, len(full)*e.info.Dims)
	if err := e.runAll(ctx, full, e.pooler(out), false); err != nil {
		return nil, err
	}
	return out, nil
}

// pooler returns the rowFunc that writes sequence i's vector (pooled and
// normalised as the model says) into row i of out.
func (e *Embedder) pooler(out []float32) rowFunc {
	dims := e.info.Dims
	return func(i int, states []float32, mask []int64) error {
		dst := out[i*dims : (i+1)*dims]
		if e.pooling == PoolNone {
			copy(dst, states)
		} else {
			pool(dst, states, mask, e.pooling)
		}
		if e.info.Normalize {
			embed.Normalize(dst)
		}
		return nil
	}
}

// rowFunc receives the model's output for sequence i of a call: its token
// states (seqLen rows of the hidden size, padding included, or one pooled
// row for a model that pools itself) and its attention mask. The slices are
// reused by the next batch. An error stops the call. Calls for different
// batches may come at the same time from different sessions, unless the
// call hands outputs over in order.
type rowFunc func(i int, states []float32, mask []int64) error

// runAll plans the batches of full and runs them on the Embedder's sessions,
// handing every sequence's output to row; with ordered, one batch at a time
// in the order of the plan.
func (e *Embedder) runAll(ctx context.Context, full [][]int32, row rowFunc, ordered bool) error {
	return runAll(ctx, e.workers(), full, func(*Embedder) rowFunc { return row }, ordered)
}

// pool writes into dst the pooling of one sequence's token vectors (seqLen rows
// of len(dst)) under its attention mask, as sentence-transformers' Pooling
// module computes it for a sequence padded on the right.
func pool(dst, tokens []float32, mask []int64, p Pooling) {
	dims := len(dst)
	n := 0 // tokens under the mask, which come first
	for n < len(mask) && mask[n] != 0 {
		n++
	}
	switch p {
	case PoolCLS:
		copy(dst, tokens[:dims])
		return
	case PoolLastToken:
		copy(dst, tokens[max(n-1, 0)*dims:max(n, 1)*dims])
		return
	case PoolMax:
		copy(dst, tokens[:dims])
		for j := 1; j < n; j++ {
			for k, v := range tokens[j*dims : (j+1)*dims] {
				dst[k] = max(dst[k], v)
			}
		}
		return
	}
	clear(dst)
	for j := range n {
		for k, v := range tokens[j*dims : (j+1)*dims] {
			dst[k] += v
		}
	}
	if n == 0 {
		return
	}
	inv := 1 / float32(n)
	if p == PoolMeanSqrtLen {
		inv = float32(1 / math.Sqrt(float64(n)))
	}
	for k := range dst {
		dst[k] *= inv
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

var (
	_ embed.Embedder = (*Embedder)(nil)
	_ embed.Embedder = (*Pool)(nil)
)
