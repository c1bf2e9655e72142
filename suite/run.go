package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/experiment"
)

// Run runs the suite: it checks everything first (Check: a missing model or
// dataset fails before any work), then runs each model's datasets and
// window sets with one open embedder, each run an experiment.Run into
// Out/NAME with its index in Indices (reused when it matches), and keeps
// summary.json and summary.md in Out current after each run. At the end it
// draws the recall@K figure and gathers every run's MTEB files under
// Out/mteb. A failed run does not stop the others: Run returns the summary
// and an error joining the failures. A cancelled ctx stops it: the run
// under way is marked StatusInterrupted, and the summary and the MTEB files
// of the runs that finished are written.
func Run(ctx context.Context, s Suite) (*Summary, error) {
	p, err := Check(ctx, s)
	if err != nil {
		return nil, err
	}
	log := s.Log
	if log == nil {
		log = io.Discard
	}
	sum := newSummary(&s, p)
	fmt.Fprintf(log, "suite %s: %d runs into %s, indices in %s\n", s.Name, len(p.Runs), p.Out, p.Indices)
	if err := sum.write(false); err != nil {
		return nil, err
	}
	var failed []error
	for _, m := range s.Models {
		errs, err := s.runModel(ctx, m, p, sum, log)
		failed = append(failed, errs...)
		if err != nil {
			// Interrupted: what finished is kept and reported, MTEB files
			// included.
			if werr := sum.write(true); werr != nil {
				fmt.Fprintf(log, "suite %s: writing the summary of the finished runs: %v\n", s.Name, werr)
			}
			return sum, err
		}
	}
	if err := sum.write(true); err != nil {
		return sum, err
	}
	fmt.Fprintf(log, "suite %s: %d runs, %d failed, %.0f s: %s\n", s.Name, len(p.Runs), len(failed), sum.Seconds, sum.Files.Report)
	return sum, errors.Join(failed...)
}

// runModel runs every run of model m with one embedder. It returns the
// failures of single runs, and an error that stops the suite (ctx
// cancelled, a summary that cannot be written).
func (s *Suite) runModel(ctx context.Context, m Model, p *Plan, sum *Summary, log io.Writer) ([]error, error) {
	emb, err := s.open(ctx, m)
	if err != nil {
		err = fmt.Errorf("suite: model %s: %w: %w", m.Name, err, ErrModel)
		for i := range p.Runs {
			if p.Runs[i].Model == m.Name {
				sum.Runs[i].Status, sum.Runs[i].Error = StatusFailed, err.Error()
			}
		}
		return []error{err}, sum.write(false)
	}
	defer emb.Close()
	var failed []error
	// Window set by window set, so that the datasets of one index size
	// follow one another.
	for _, ws := range m.WindowSets {
		for i := range p.Runs {
			r := &p.Runs[i]
			if r.Model != m.Name || !slices.Equal(r.Windows, ws) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return failed, err
			}
			fmt.Fprintf(log, "suite: run %d of %d: %s with %s at windows %v into %s\n",
				i+1, len(p.Runs), r.Dataset.Name, r.Model, r.Windows, filepath.Join(p.Out, r.Name))
			if err := s.runOne(ctx, emb, r, p, &sum.Runs[i]); err != nil {
				if ctx.Err() != nil {
					return failed, err
				}
				fmt.Fprintf(log, "suite: run %s failed: %v\n", r.Name, err)
				failed = append(failed, err)
			}
			if err := sum.write(false); err != nil {
				return failed, err
			}
		}
	}
	return failed, nil
}

// runOne runs r with emb and records it in rs.
func (s *Suite) runOne(ctx context.Context, emb msrag.Embedder, r *Planned, p *Plan, rs *RunSummary) error {
	t0 := time.Now()
	spec := experiment.Spec{
		Dataset: r.Dataset.Dir, Split: r.Dataset.Split, Out: filepath.Join(p.Out, r.Name),
		Build:   msrag.Config{Out: r.Index, Embedder: emb, Windows: chunk.Sizes(r.Windows...), Wait: s.Wait, Workers: s.Workers},
		Configs: r.Configs, K: s.K, ChannelK: s.ChannelK, Batch: s.Batch, Rebuild: s.Rebuild,
		Log: s.Log, MTEB: r.MTEB,
	}
	if s.Progress != nil {
		update, done := s.Progress(r.Name)
		spec.Build.Progress = update
		if done != nil {
			defer done()
		}
	}
	res, err := experiment.Run(ctx, spec)
	if err != nil {
		err = fmt.Errorf("suite: run %s: %w", r.Name, err)
		rs.Status, rs.Error = StatusFailed, err.Error()
		if ctx.Err() != nil {
			rs.Status, rs.Error = StatusInterrupted, "interrupted: "+ctx.Err().Error()
		}
		return err
	}
	rs.done(res, time.Since(t0).Seconds())
	return nil
}
