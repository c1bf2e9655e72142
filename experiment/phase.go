package experiment

import (
	"context"
	"fmt"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/report"
)

// Phase is one phase of a scatter-gather evaluation over the shards of
// Spec.Index (package msrag's Statistics, Scatter and OpenGather), run as
// its own process; every phase is given the same Spec but for Phase and
// Shard.
type Phase int

// Phases.
const (
	// PhaseNone evaluates in this process: the index (or every shard)
	// opened, searched and fused here.
	PhaseNone Phase = iota
	// PhaseStats writes shard Spec.Shard's statistics for the split's
	// queries and embeds its block of them.
	PhaseStats
	// PhaseScatter searches shard Spec.Shard alone and writes its lists.
	PhaseScatter
	// PhaseGather merges every shard's lists and evaluates them as Run
	// does, writing what it writes.
	PhaseGather
)

// scatterOptions are the options every phase of the evaluation gives
// package msrag: every kind of the index searched, the blocks of Batch.
func (s Spec) scatterOptions() msrag.ScatterOptions {
	return msrag.ScatterOptions{Work: s.Work, WindowK: s.WindowK, Batch: s.Batch,
		Open: msrag.OpenOptions{Embedder: s.Embedder}}
}

func querySet(queries []corpus.Query) msrag.QuerySet {
	var qs msrag.QuerySet
	for _, q := range queries {
		qs.IDs, qs.Texts = append(qs.IDs, q.ID), append(qs.Texts, q.Text)
	}
	return qs
}

// runTask runs the statistics or scatter task Spec.Shard over the shards
// of Spec.Index for the queries.
func runTask(ctx context.Context, spec Spec, queries []corpus.Query) error {
	dirs := indexDirs(spec.Index)
	if len(dirs) == 0 {
		return fmt.Errorf("experiment: no index in %s: a scatter-gather evaluation searches an index built beforehand (msrag index --shard i/n)", spec.Index)
	}
	qs := querySet(queries)
	if spec.Phase == PhaseStats {
		return msrag.Statistics(ctx, dirs, spec.Shard, qs, spec.scatterOptions())
	}
	return msrag.Scatter(ctx, dirs, spec.Shard, qs, spec.scatterOptions())
}

// openGathered opens the gather of the scatter-gather evaluation: the
// shards' documents, checked to be an index spec may evaluate, and every
// shard's lists.
func openGathered(spec Spec, queries []corpus.Query) (*msrag.Gather, report.IndexInfo, error) {
	dirs := indexDirs(spec.Index)
	if len(dirs) == 0 {
		return nil, report.IndexInfo{}, fmt.Errorf("experiment: no index in %s to gather the search of", spec.Index)
	}
	if _, why, err := identified(spec, dirs); err != nil || why != "" {
		if err == nil {
			err = fmt.Errorf("experiment: index %s does not fit this evaluation: %s", spec.Index, why)
		}
		return nil, report.IndexInfo{}, err
	}
	g, err := msrag.OpenGather(dirs, querySet(queries), spec.scatterOptions())
	if err != nil {
		return nil, report.IndexInfo{}, err
	}
	if why := servesConfigs(g.Index(), spec); why != "" {
		g.Close()
		return nil, report.IndexInfo{}, fmt.Errorf("experiment: index %s does not fit this evaluation: %s", spec.Index, why)
	}
	return g, report.IndexInfo{Dir: spec.Index, Reused: true, Why: fmt.Sprintf("gathered from %d shards' lists in %s", len(dirs), spec.Work)}, nil
}
