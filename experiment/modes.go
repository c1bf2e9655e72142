package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/report"
)

// ModesResult is what RunModes produced.
type ModesResult struct {
	// Runs are the runs, one per embedding, in the order asked for.
	Runs []*Result
	// Modes compares them; written as modes.json and modes.md in Spec.Out.
	Modes          *report.Modes
	JSON, Markdown string
}

// ModeSpec is the spec of mode's run within RunModes: its output in
// Out/MODE, its index in Out/MODE/index, or, when spec.Build.Out is set, there
// for independent and in Index-MODE for the others.
func ModeSpec(spec Spec, mode msrag.Embedding) Spec {
	s := spec
	s.Build.Embedding = mode
	s.Out = filepath.Join(spec.Out, mode.String())
	switch {
	case spec.Build.Out == "":
		s.Build.Out = ""
	case mode != msrag.Independent:
		s.Build.Out = spec.Build.Out + "-" + mode.String()
	}
	if mode != msrag.Late {
		s.Build.LateOverlap, s.Build.LateEdges = 0, late.EdgesSegment
	}
	return s
}

// RunModes evaluates spec once per embedding in modes (as ModeSpec places
// them), embedding the queries once for all, and compares every
// configuration across the runs with the first one's, query by query.
func RunModes(ctx context.Context, spec Spec, modes []msrag.Embedding) (*ModesResult, error) {
	if len(modes) < 2 {
		return nil, fmt.Errorf("experiment: comparing embeddings needs two or more, got %v", modes)
	}
	for i, m := range modes {
		if slices.Contains(modes[:i], m) {
			return nil, fmt.Errorf("experiment: embedding %v given twice", m)
		}
	}
	log := spec.Log
	if log == nil {
		log = io.Discard
	}
	if spec.Queries == nil {
		spec.Queries = msrag.NewQueryCache(spec.Build.Embedder)
	}
	res := &ModesResult{}
	var evals []*report.Eval
	var names, outs []string
	for _, m := range modes {
		s := ModeSpec(spec, m)
		fmt.Fprintf(log, "eval: %s embedding into %s\n", m, s.Out)
		r, err := Run(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("experiment: %s embedding: %w", m, err)
		}
		res.Runs = append(res.Runs, r)
		evals, names, outs = append(evals, r.Report), append(names, m.String()), append(outs, s.Out)
	}
	var err error
	if res.Modes, err = report.CompareModes(evals, names, outs, PairedMetric); err != nil {
		return nil, err
	}
	res.JSON, res.Markdown = filepath.Join(spec.Out, "modes.json"), filepath.Join(spec.Out, "modes.md")
	if err := writeJSON(res.JSON, res.Modes); err != nil {
		return nil, err
	}
	if err := writeWith(res.Markdown, func(w io.Writer) error { return report.WriteModesMarkdown(w, res.Modes) }); err != nil {
		return nil, err
	}
	return res, nil
}
