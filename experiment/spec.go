package experiment

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/tune"
)

// Spec says what to evaluate. Dataset, Out, Build.Embedder (or
// Build.Tokenizer) and Build.Windows are required; every other field has a
// documented default.
type Spec struct {
	// Dataset is the dataset directory (corpus.OpenDataset).
	Dataset string
	// Split is the qrels split; several joined by "+" (train+dev) are
	// judged together. Default "test".
	Split string
	// Out is the output directory.
	Out string
	// Build is the configuration of the evaluation's index, as msrag index
	// builds one: what its reuse compares an index with
	// (msrag.Config.Identity) and what a build gets. Build.Embedder (the
	// model; the caller opens and closes it) or Build.Tokenizer is
	// required, and Build.Windows lists the sliding windows: with a model
	// the index also gets the full window (chunk.Full), not listed there.
	// Build.Out is the index directory to reuse or build (default
	// Out/index); the evaluation sets Lock, Inputs and Rebuildable itself.
	// An index embedded otherwise (Embedding, LateOverlap, LateEdges), or
	// without the channels (Channels) given, or with other parameters of
	// them, is not reused.
	//
	// With Build.Tokenizer (an evaluation without a model: the windows cut
	// by its tokens, the channels of kinds that read texts alone, no full
	// window) the configurations fuse those (rrf is rrf:windows=KIND
	// there; default NoModelConfigs), and a fusion model's router and
	// cross-validation, which need query vectors, are refused (a fusion
	// model msrag tune fitted on such an index has no router).
	Build msrag.Config
	// Configs are the configurations; default ParseConfigs(DefaultConfigs,
	// the index's layout). An index msrag index built without the full
	// window is reused all the same: from the default configurations those
	// that need it (full) are left out, saying so on Log; configurations
	// given here that need it are refused.
	Configs []Config
	// K is the number of documents ranked per query (default 100), ChannelK
	// the chunks each channel returns (default 100), Batch the queries
	// embedded and searched at once (default 1024).
	K, ChannelK, Batch int
	// GPUs, when set, are the GPUs every window's FAISS index is
	// searched on (one device, or sharded across several;
	// msrag.Index.ToGPU): a reused index is moved there when opened, a
	// built one (its vectors added on the CPU) once built, and a scatter
	// task's shard when opened. It needs msrag built with FAISS GPU support
	// and ChannelK at most faiss.MaxGPUK, both checked before any work
	// (msrag.CheckGPUs). The queries' embedder is Build.Embedder's
	// business: open it on the GPUs too.
	GPUs []int
	// Rebuild builds the index even when the one in Build.Out matches.
	Rebuild bool
	// Corpus names the corpus's columns.
	Corpus corpus.Options
	// MTEB names the run in the MTEB result files written beside
	// results.json (see WriteMTEB); its zero value derives every name.
	MTEB MTEBOptions
	// FusionModel, when set, adds the configurations "learned" (its rule)
	// and "learned+router"; it must not have been trained on any query of
	// the split evaluated.
	FusionModel *tune.FusionModel
	// Builtin, when set, names a built-in fusion model (tune.TransferName)
	// and adds a configuration of that name: the fusion its fit chose
	// (tune.FusionModel.Chosen), of the built-in model that serves the
	// index (tune.Builtin); it must not have been trained on any query of
	// the split evaluated.
	Builtin string
	// CVFolds > 1 adds "learned-cv" and "learned+router-cv": each query
	// ranked by a rule and router fitted (package tune) on the queries of
	// the other folds, for a split without a training split of its own.
	// CVGroup, when set, keeps the queries whose ids it maps to one value
	// (its first submatch, else the whole match) in one fold.
	CVFolds int
	CVGroup *regexp.Regexp
	// Queries, when set, embeds the queries: the model of Build.Embedder, such as
	// a msrag.QueryCache over it, which RunModes gives every mode so that
	// each is searched with the same vectors. Nil: Build.Embedder.
	Queries msrag.Embedder
	// Log receives notices: why the index is reused or built, the queries
	// searched so far. Nil discards them.
	Log io.Writer
	// Work is the directory the phases of a scatter-gather evaluation share
	// (Statistics, Scatter, Gather), and Shard a task's shard of Build.Out.
	Work  string
	Shard int

	// defaultConfigs is set by withDefaults when it chose Configs.
	defaultConfigs bool
}

// checkGPUs is msrag.CheckGPUs; a test of where Spec.GPUs goes replaces it
// on a machine without FAISS GPU support.
var checkGPUs = msrag.CheckGPUs

func (s Spec) withDefaults() (Spec, error) {
	switch {
	case s.Dataset == "":
		return s, errors.New("experiment: Spec.Dataset is required")
	case s.Out == "":
		return s, errors.New("experiment: Spec.Out is required")
	case s.Build.Embedder == nil && s.Build.Tokenizer == nil:
		return s, errors.New("experiment: Spec.Build.Embedder is required (or Spec.Build.Tokenizer, for an index without a model)")
	case s.Build.Embedder != nil && s.Build.Tokenizer != nil:
		return s, errors.New("experiment: Spec.Build.Tokenizer is for an evaluation without an embedder")
	case s.Build.Tokenizer != nil && (s.FusionModel != nil && s.FusionModel.Router != nil || s.CVFolds > 1 || s.Build.Embedding != msrag.Independent):
		return s, errors.New("experiment: an evaluation without a model (Spec.Build.Tokenizer) has no router, cross-validation or late embedding: they need query vectors")
	case s.Builtin != "" && !tune.IsBuiltin(s.Builtin):
		return s, fmt.Errorf("experiment: Spec.Builtin %q: %w", s.Builtin, tune.ErrNoBuiltin)
	case s.CVGroup != nil && s.CVFolds < 2:
		return s, fmt.Errorf("experiment: Spec.CVGroup groups the queries of cross-validation, and Spec.CVFolds is %d: %w", s.CVFolds, ErrCVGroups)
	case len(s.Build.Windows) == 0 || slices.ContainsFunc(s.Build.Windows, func(w chunk.Window) bool { return w.Truncate }):
		return s, errors.New("experiment: Spec.Build.Windows must list the sliding windows (the full window is added)")
	}
	if s.Split == "" {
		s.Split = "test"
	}
	if s.Build.Out == "" {
		s.Build.Out = filepath.Join(s.Out, "index")
	}
	if s.K == 0 {
		s.K = 100
	}
	if s.ChannelK == 0 {
		s.ChannelK = 100
	}
	if s.Batch == 0 {
		s.Batch = 1024
	}
	if s.K < 0 || s.ChannelK < 0 || s.Batch < 0 {
		return s, fmt.Errorf("experiment: K %d, ChannelK %d and Batch %d must be positive", s.K, s.ChannelK, s.Batch)
	}
	if err := checkGPUs(s.GPUs, s.ChannelK); err != nil {
		return s, fmt.Errorf("experiment: Spec.GPUs: %w", err)
	}
	if s.Log == nil {
		s.Log = io.Discard
	}
	task, respelled, err := CheckTask(s.MTEB.Task, s.Dataset, s.MTEB.ForceTask)
	if err != nil {
		return s, err
	}
	if respelled {
		fmt.Fprintf(s.Log, "experiment: MTEB task %q is %s in mteb's spelling\n", s.MTEB.Task, task)
	}
	s.MTEB.Task = task
	s.Build.Channels = s.channels()
	if err := s.checkLearned(); err != nil {
		return s, err
	}
	if len(s.Configs) == 0 {
		def := DefaultConfigs
		if s.Build.Tokenizer != nil {
			def = NoModelConfigs
		}
		s.Configs, err = ParseConfigs(def, s.Layout())
		s.defaultConfigs = true
	}
	return s, err
}

// buildConfig is the configuration the evaluation's index is built with:
// Build with the full window added (with a model).
func (s Spec) buildConfig() msrag.Config {
	c := s.Build
	c.Windows = s.indexWindows()
	return c
}

// NoModelConfigs is what an evaluation without a model (Spec.Build.Tokenizer)
// evaluates unless told otherwise: DefaultConfigs without full, which an
// index without a model does not have.
const NoModelConfigs = "windows,rrf,maxp,oracle"

// indexWindows are the windows of the evaluation index: the sliding ones and
// the full window (none without a model).
func (s Spec) indexWindows() []chunk.Window {
	if s.Build.Tokenizer != nil {
		return slices.Clone(s.Build.Windows)
	}
	return append(slices.Clone(s.Build.Windows), chunk.Full)
}

// Layout is the evaluation index's layout: the channels of Build.Channels'
// kinds (default: the registered kinds built by default, channel.Defaults)
// over the sliding windows and, with a model, the full window.
func (s Spec) Layout() msrag.Layout {
	var kinds []msrag.ChannelKind
	for _, c := range s.channels() {
		kinds = append(kinds, c.Kind())
	}
	return channel.LayoutOf(kinds, s.indexWindows())
}

// channels are the kinds of channel the evaluation index has:
// Build.Channels, or those a build makes by default.
func (s Spec) channels() []channel.Params {
	if len(s.Build.Channels) > 0 {
		return s.Build.Channels
	}
	return channel.Defaults(s.Build.Tokenizer == nil)
}

// EvalLayout is the layout of an evaluation index of the sliding windows
// with a model: those windows and the full window, with channels of the
// kinds given (none: those built by default with a model).
func EvalLayout(windows []chunk.Window, kinds ...msrag.ChannelKind) msrag.Layout {
	if len(kinds) == 0 {
		for _, c := range channel.Defaults(true) {
			kinds = append(kinds, c.Kind())
		}
	}
	return channel.LayoutOf(kinds, append(slices.Clone(windows), chunk.Full))
}
