package experiment

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/report"
)

// openOrBuild reuses the index in spec.Build.Out when it matches, or builds
// it, and moves it to spec.GPUs.
func openOrBuild(ctx context.Context, spec Spec, ds *corpus.Dataset, tm *report.Timings) (msrag.Searcher, report.IndexInfo, error) {
	ix, info, err := reuseOrBuild(ctx, spec, ds, tm)
	if err != nil {
		return nil, info, err
	}
	if len(spec.GPUs) == 0 {
		return ix, info, nil
	}
	t0 := time.Now()
	if err := ix.ToGPU(spec.GPUs); err != nil {
		ix.Close()
		return nil, info, fmt.Errorf("experiment: index %s: %w", spec.Build.Out, err)
	}
	tm.Open += time.Since(t0).Seconds()
	return ix, info, nil
}

// reuseOrBuild reuses the index in spec.Build.Out when it matches, or builds it,
// holding the index's lock from the decision until the index is open.
func reuseOrBuild(ctx context.Context, spec Spec, ds *corpus.Dataset, tm *report.Timings) (*msrag.Index, report.IndexInfo, error) {
	lock, err := msrag.LockIndex(ctx, spec.Build.Out, spec.Build.Wait)
	if err != nil {
		return nil, report.IndexInfo{}, err
	}
	defer lock.Unlock()
	t0 := time.Now()
	src := sourceOf(ds.Corpus)
	why := "rebuild asked for"
	if !spec.Rebuild {
		ix, reason, err := reuse(spec, src)
		if err != nil {
			return nil, report.IndexInfo{}, err
		}
		if ix != nil {
			tm.Open = time.Since(t0).Seconds()
			fmt.Fprintf(spec.Log, "eval: reusing index %s (%s)\n", spec.Build.Out, reason)
			return ix, report.IndexInfo{Dir: spec.Build.Out, Reused: true, Why: reason, CorpusSHA256: src.SHA256}, nil
		}
		why = reason
		if err := keepUnasked(spec.Build.Out, reason); err != nil {
			return nil, report.IndexInfo{}, err
		}
	}
	fmt.Fprintf(spec.Log, "eval: building index %s: %s\n", spec.Build.Out, why)
	ix, err := build(ctx, spec, ds, src, lock, tm)
	return ix, report.IndexInfo{Dir: spec.Build.Out, Why: why, CorpusSHA256: src.SHA256}, err
}

// keepUnasked refuses to replace an index in dir that msrag index built (an
// evaluation replaces only its own unasked); reason says why it does not
// fit.
func keepUnasked(dir, reason string) error {
	if len(indexDirs(dir)) == 0 {
		return nil
	}
	own, err := rebuildable(dir)
	if err != nil || own {
		return err
	}
	return fmt.Errorf("experiment: index %s was built by msrag index and does not fit this evaluation: %s; "+
		"pass --rebuild (Spec.Rebuild) to replace it, or use another index directory", dir, reason)
}

// unserved names the configurations the index cannot serve
// (fusion.CheckServes): those that fuse a channel it lacks.
func unserved(configs []Config, ix msrag.Searcher) []string {
	var names []string
	layout, dims := ix.Layout(), ix.Manifest().Model.Dims
	for _, c := range configs {
		if !c.Ranking.fused() {
			continue
		}
		if err := fusion.CheckServes(c.Fusion, layout, dims, ix.Dir(), nil); err != nil {
			names = append(names, c.Name)
		}
	}
	return names
}

// leaveOut drops from spec's default configurations those the index cannot
// serve (full, on an index msrag index built without --full), saying so in
// one line; reuseIndex has refused an index that lacks what configurations
// given in Spec.Configs need.
func leaveOut(spec Spec, ix msrag.Searcher) []Config {
	out := unserved(spec.Configs, ix)
	if len(out) == 0 {
		return spec.Configs
	}
	fmt.Fprintf(spec.Log, "eval: leaving out %s: index %s has no full window (msrag index builds it with --full)\n", strings.Join(out, ", "), spec.Build.Out)
	return slices.DeleteFunc(slices.Clone(spec.Configs), func(c Config) bool { return slices.Contains(out, c.Name) })
}

// served is the evaluation's layout less the channels the index lacks (the
// full window's, on an index msrag index built without --full).
func served(spec Spec, ix msrag.Searcher) msrag.Layout {
	have := ix.Layout()
	return slices.DeleteFunc(spec.Layout(), func(c msrag.Channel) bool { return have.Index(c.Name()) < 0 })
}

// build builds the index under lock; its manifest records the corpus
// files (their sizes, times and sha256), which decide its reuse, and that
// it is the evaluation's own. A record of the corpus beside the index from
// before manifests held it goes first.
func build(ctx context.Context, spec Spec, ds *corpus.Dataset, src *corpusSource, lock *msrag.IndexLock, tm *report.Timings) (*msrag.Index, error) {
	inputs, err := src.inputs()
	if err != nil {
		return nil, err
	}
	rd, err := ds.OpenCorpus(spec.Corpus)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if err := removeSource(spec.Build.Out); err != nil {
		return nil, err
	}
	t0 := time.Now()
	cfg := spec.buildConfig()
	cfg.Lock, cfg.Inputs, cfg.Rebuildable = lock, inputs, true
	ix, stats, err := msrag.BuildWithStats(ctx, rd, cfg)
	if err != nil {
		return nil, err
	}
	tm.Build = time.Since(t0).Seconds()
	tm.BuildEmbed, tm.BuildTokens = stats.EmbedBusy.Seconds(), stats.Tokens
	fmt.Fprintf(spec.Log, "eval: built %s (%s embedding): %d docs, %d unique chunks, %v vectors per window, %d tokens, %.1f s, %.0f tokens/s (embedder busy %.0f%%)\n",
		spec.Build.Out, spec.Build.Embedding, stats.Docs, stats.UniqueChunks, stats.Vectors, stats.Tokens, tm.Build, float64(stats.Tokens)/tm.Build, 100*tm.BuildEmbed/tm.Build)
	return ix, nil
}
