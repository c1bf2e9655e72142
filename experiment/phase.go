package experiment

import (
	"context"
	"fmt"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/scatter"
)

// A scatter-gather evaluation runs over the shards of Spec.Build.Out, built
// beforehand, in three phases (package scatter's Statistics, Scatter and
// OpenGather), each a process of its own sharing the directory Spec.Work:
// Statistics and Scatter, one task per shard (Spec.Shard), write into it;
// Gather evaluates what they wrote as Run evaluates a search, and writes
// what Run writes. Every phase is given the same Spec but for Shard.

// scatterOptions are the options every phase of the evaluation gives
// package scatter: every kind of the index searched, the blocks of Batch, the
// channels that search on GPUs there (which only a scatter task opens).
func (s Spec) scatterOptions() scatter.Options {
	return scatter.Options{Work: s.Work, ChannelK: s.ChannelK, Batch: s.Batch,
		Open: msrag.OpenOptions{Embedder: s.Build.Embedder, GPUs: s.GPUs}}
}

// Statistics runs task Spec.Shard of the statistics phase: the shard's
// statistics for the split's judged queries and its block of them
// embedded, into Spec.Work.
func Statistics(ctx context.Context, spec Spec) error {
	return task(ctx, spec, scatter.Statistics)
}

// Scatter runs task Spec.Shard of the scatter phase: the shard searched
// alone, its lists written into Spec.Work.
func Scatter(ctx context.Context, spec Spec) error {
	return task(ctx, spec, scatter.Scatter)
}

// Gather evaluates the lists every scatter task wrote, as Run evaluates a
// search of the shards in one process.
func Gather(ctx context.Context, spec Spec) (*Result, error) {
	return run(ctx, spec, func(_ context.Context, spec Spec, _ *corpus.Dataset, queries []corpus.Query, _ *report.Timings) (msrag.Searcher, report.IndexInfo, error) {
		g, info, err := openGathered(spec, queries)
		if err != nil {
			return nil, info, err
		}
		return g, info, nil
	})
}

// task runs a task of a phase of package scatter's over the shards of Spec.Build.Out for
// the split's judged queries.
func task(ctx context.Context, spec Spec, phase func(context.Context, []string, int, scatter.QuerySet, scatter.Options) error) error {
	spec, err := spec.withDefaults()
	if err != nil {
		return err
	}
	if spec.Work == "" {
		return fmt.Errorf("experiment: a scatter-gather task needs Spec.Work")
	}
	ds, err := corpus.OpenDataset(spec.Dataset)
	if err != nil {
		return err
	}
	_, queries, err := ds.JudgedQueries(spec.Split)
	if err != nil {
		return err
	}
	dirs := indexDirs(spec.Build.Out)
	if len(dirs) == 0 {
		return fmt.Errorf("experiment: no index in %s: a scatter-gather evaluation searches an index built beforehand (msrag index --shard i/n)", spec.Build.Out)
	}
	return phase(ctx, dirs, spec.Shard, scatter.QuerySetOf(queries), spec.scatterOptions())
}

// openGathered opens the gather of the scatter-gather evaluation: the
// shards' documents, checked to be an index spec may evaluate, and every
// shard's lists.
func openGathered(spec Spec, queries []corpus.Query) (*scatter.Gather, report.IndexInfo, error) {
	if spec.Work == "" {
		return nil, report.IndexInfo{}, fmt.Errorf("experiment: a gather needs Spec.Work")
	}
	dirs := indexDirs(spec.Build.Out)
	if len(dirs) == 0 {
		return nil, report.IndexInfo{}, fmt.Errorf("experiment: no index in %s to gather the search of", spec.Build.Out)
	}
	if _, why, err := identified(spec, dirs); err != nil || why != "" {
		if err == nil {
			err = fmt.Errorf("experiment: index %s does not fit this evaluation: %s", spec.Build.Out, why)
		}
		return nil, report.IndexInfo{}, err
	}
	g, err := scatter.OpenGather(dirs, scatter.QuerySetOf(queries), spec.scatterOptions())
	if err != nil {
		return nil, report.IndexInfo{}, err
	}
	if why := servesConfigs(g, spec); why != "" {
		g.Close()
		return nil, report.IndexInfo{}, fmt.Errorf("experiment: index %s does not fit this evaluation: %s", spec.Build.Out, why)
	}
	return g, report.IndexInfo{Dir: spec.Build.Out, Reused: true, Why: fmt.Sprintf("gathered from %d shards' lists in %s", len(dirs), spec.Work)}, nil
}
