package suite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	_ "github.com/msrag/msrag/embedders" // the default Open takes every built-in kind
	"github.com/msrag/msrag/onnx"
)

// Errors wrapped by what Check and Run return, for use with errors.Is.
var (
	// ErrDataset reports a dataset directory that does not open, or lacks
	// the qrels of its split.
	ErrDataset = errors.New("dataset not usable")
	// ErrModel reports a model that does not open (not fetched, unknown),
	// or whose window sizes do not fit it.
	ErrModel = errors.New("model not usable")
	// ErrInvalid reports a suite that is wrong in itself: a file that does
	// not parse, a missing or contradictory field, a configuration that
	// does not apply to a window set.
	ErrInvalid = errors.New("suite not valid")
)

// invalid marks err as ErrInvalid without changing its text.
type invalid struct{ err error }

func (e invalid) Error() string        { return e.err.Error() }
func (e invalid) Unwrap() error        { return e.err }
func (e invalid) Is(target error) bool { return target == ErrInvalid }

// Check validates s and everything it names without running anything: the
// suite's fields, every dataset (its directory opens and has the qrels of
// its split) and every model (it opens, and each of its window sets fits
// it). Every missing dataset and model is reported, not only the first. It
// returns the plan of runs.
func Check(ctx context.Context, s Suite) (*Plan, error) {
	p, err := s.plan()
	if err != nil {
		return nil, err
	}
	return p, s.check(ctx, p)
}

// check opens every dataset and model of p.
func (s *Suite) check(ctx context.Context, p *Plan) error {
	var errs []error
	seen := map[string]bool{}
	for _, r := range p.Runs {
		if key := r.Dataset.Dir + "\x00" + r.Dataset.Split; !seen[key] {
			seen[key] = true
			errs = append(errs, checkDataset(r.Dataset))
		}
	}
	for _, m := range s.Models {
		if err := ctx.Err(); err != nil {
			return err
		}
		errs = append(errs, s.checkModel(ctx, m))
	}
	return errors.Join(errs...)
}

// checkDataset opens d's directory and finds the qrels of its split.
func checkDataset(d Dataset) error {
	ds, err := corpus.OpenDataset(d.Dir)
	if err != nil {
		return fmt.Errorf("suite: dataset %s: %w: %w", d.Name, err, ErrDataset)
	}
	for _, sp := range strings.Split(d.Split, "+") {
		if len(ds.Qrels[sp]) == 0 {
			return fmt.Errorf("suite: dataset %s: %s has no qrels of split %q (it has %s): %w",
				d.Name, d.Dir, sp, strings.Join(ds.Splits(), ", "), ErrDataset)
		}
	}
	return nil
}

// checkModel opens m and checks that its window sets fit it.
func (s *Suite) checkModel(ctx context.Context, m Model) error {
	emb, err := s.open(ctx, m)
	if err != nil {
		return fmt.Errorf("suite: model %s: %w: %w", m.Name, err, ErrModel)
	}
	defer emb.Close()
	spec := emb.Spec()
	for _, ws := range m.WindowSets {
		_, err := chunk.New(chunk.Config{Windows: chunk.Sizes(ws...), MaxTokens: spec.MaxTokens,
			PrefixTokens: spec.PrefixTokens[embed.Passage], SpecialTokens: spec.SpecialTokens})
		if err != nil {
			return fmt.Errorf("suite: model %s, window set %v: %w: %w", m.Name, ws, err, ErrModel)
		}
	}
	return nil
}

// open opens the model m with s.Open, or OpenModel (in fp16 with m.FP16).
func (s *Suite) open(ctx context.Context, m Model) (msrag.Embedder, error) {
	if s.Open != nil {
		return s.Open(m.Name)
	}
	opts := s.Embedder
	if m.FP16 {
		opts.Extra = append([]any{onnx.Options{FP16: true}}, opts.Extra...)
	}
	return OpenModel(ctx, m.Name, opts)
}

// OpenModel opens a model the way a suite does by default: with the
// registered kind that claims its name (msrag.OpenEmbedder), so a suite may
// name any model the command line takes: a built-in or fetched ONNX model,
// a model behind a server (openai:URL, tei:URL), hash-test-embedder (the
// non-semantic test embedder). This package registers every built-in kind
// (package embedders). A built-in model that is not fetched gives an error
// that names the command that fetches it (msrag model fetch NAME). The
// caller closes the embedder. The suite's device is for its models that
// run on one: a model that runs on none (a server's, the hash test
// embedder) is opened without it, which embed.Open would refuse.
func OpenModel(ctx context.Context, name string, opts embed.Options) (msrag.Embedder, error) {
	opts.GPUs = slices.Clone(opts.GPUs)
	if !embed.Devices(embed.Origin{}, name) {
		opts = opts.WithoutDevice()
	}
	return msrag.OpenEmbedder(ctx, name, opts)
}
