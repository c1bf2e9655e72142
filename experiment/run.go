package experiment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/tune"
)

// Result is what Run produced.
type Result struct {
	// Report is results.json: every configuration's scores, per query too.
	Report *report.Eval
	// Runs holds each configuration's ranking by its name (not the oracle).
	Runs map[string]eval.Run
	// Qrels are the judgements the runs were scored against.
	Qrels eval.Qrels
	// Files are the files written into Spec.Out.
	Files Files
}

// Run evaluates spec: it reuses or builds the index, searches the split's
// judged queries, fuses and scores every configuration and writes the results
// into spec.Out.
func Run(ctx context.Context, spec Spec) (*Result, error) {
	return run(ctx, spec, func(ctx context.Context, spec Spec, ds *corpus.Dataset, _ []corpus.Query, tm *report.Timings) (msrag.Searcher, report.IndexInfo, error) {
		return openOrBuild(ctx, spec, ds, tm)
	})
}

// opener opens what an evaluation's queries are searched in: the index, or
// the gather of a scatter-gather search of its shards.
type opener func(ctx context.Context, spec Spec, ds *corpus.Dataset, queries []corpus.Query, tm *report.Timings) (msrag.Searcher, report.IndexInfo, error)

// run evaluates spec with the queries searched in what open opens.
func run(ctx context.Context, spec Spec, open opener) (*Result, error) {
	start := time.Now()
	spec, err := spec.withDefaults()
	if err != nil {
		return nil, err
	}
	ds, err := corpus.OpenDataset(spec.Dataset)
	if err != nil {
		return nil, err
	}
	j, queries, err := ds.JudgedQueries(spec.Split)
	if err != nil {
		return nil, err
	}
	qrels := eval.Qrels(j)
	if err := checkRelevant(ds, spec.Split, qrels); err != nil {
		return nil, err
	}
	if err := checkGroups(spec, ds, queries); err != nil {
		return nil, err
	}
	var tm report.Timings
	ix, info, err := open(ctx, spec, ds, queries, &tm)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	if err := checkJudged(ds, spec.Split, qrels, ix); err != nil {
		return nil, err
	}
	spec.Configs = leaveOut(spec, ix)
	if spec.Configs, err = addLearned(spec, ix, queries); err != nil {
		return nil, err
	}
	for _, c := range spec.Configs {
		if err := ix.CheckFusion(c.Fusion); c.Ranking.fused() && err != nil {
			return nil, fmt.Errorf("experiment: configuration %s: %w", c.Name, err)
		}
	}
	if c := ix.Clamp(msrag.SearchOptions{K: spec.K, ChannelK: spec.ChannelK}); c.K < spec.K || c.ChannelK < spec.ChannelK {
		fmt.Fprintf(spec.Log, "eval: k %d and window k %d are more than the index holds: ranking %d documents from at most %d chunks a window\n",
			spec.K, spec.ChannelK, c.K, c.ChannelK)
	}
	runs, batches, err := search(ctx, spec, ix, queries, &tm)
	if err != nil {
		return nil, err
	}
	if err := crossValidate(spec, ix, queries, batches, qrels, runs); err != nil {
		return nil, err
	}
	t0 := time.Now()
	res := &Result{Runs: runs, Qrels: qrels, Report: newReport(spec, ds, ix, info, len(queries))}
	if res.Report.DatasetFingerprint, err = fingerprint(ds, spec.Split, info.CorpusSHA256); err != nil {
		return nil, err
	}
	res.Report.MTEB = spec.MTEB.resolve(ds, res.Report.DatasetFingerprint)
	applyRules(spec, res)
	if err := score(spec, served(spec, ix), res); err != nil {
		return nil, err
	}
	tm.Eval = time.Since(t0).Seconds()
	tm.Total = time.Since(start).Seconds()
	res.Report.Timings = tm
	if res.Files, err = write(spec, ds, res); err != nil {
		return nil, err
	}
	return res, nil
}

// applyRules scores the runs by the rules of the task (MTEBOptions.scoring):
// it drops the hits they drop from every configuration's run and records
// the rules in the report.
func applyRules(spec Spec, res *Result) {
	sc := spec.MTEB.scoring(res.Report.MTEB.Task)
	for name, r := range res.Runs {
		var n int
		res.Runs[name], n = sc.Apply(r)
		sc.Dropped += n
	}
	res.Report.Scoring = sc
	if sc.Any() {
		fmt.Fprintf(spec.Log, "eval: scoring with ignore_identical_ids %v, skip_first_result %v (%s): %d hits dropped from the runs\n",
			sc.IgnoreIdenticalIDs, sc.SkipFirstResult, sc.Source, sc.Dropped)
	}
}

// search embeds and searches the queries batch by batch and fuses every
// configuration from the same chunk lists; with cross-validation it also
// returns the batches' chunk lists.
func search(ctx context.Context, spec Spec, ix msrag.Searcher, queries []corpus.Query, tm *report.Timings) (map[string]eval.Run, []*fusion.Lists, error) {
	runs := map[string]eval.Run{}
	for _, c := range spec.Configs {
		if c.Ranking.fused() {
			runs[c.Name] = eval.Run{}
		}
	}
	texts, ids := make([]string, len(queries)), make([]string, len(queries))
	for i, q := range queries {
		texts[i], ids[i] = q.Text, q.ID
	}
	var batches []*fusion.Lists
	var fuseTime time.Duration
	bt, err := ix.SearchBatches(ctx, texts, msrag.BatchOptions{Batch: spec.Batch, ChannelK: spec.ChannelK, Queries: spec.Queries}, func(lo int, ch *msrag.ChunkHits) error {
		t0 := time.Now()
		if err := fuseBatch(spec, ix, ch, ids[lo:lo+ch.NQ], runs); err != nil {
			return err
		}
		fuseTime += time.Since(t0)
		if spec.CVFolds > 1 {
			batches = append(batches, &ch.Lists)
		}
		fmt.Fprintf(spec.Log, "eval: searched %d of %d queries\n", lo+ch.NQ, len(queries))
		return nil
	})
	tm.Embed += bt.Embed.Seconds()
	tm.Search += bt.Search.Seconds()
	tm.Fuse += fuseTime.Seconds()
	if err != nil {
		return nil, nil, fmt.Errorf("experiment: %w", err)
	}
	return runs, batches, nil
}

// fuseBatch fuses every configuration of a batch of queries, ids, into its
// run.
func fuseBatch(spec Spec, ix msrag.Searcher, ch *msrag.ChunkHits, ids []string, runs map[string]eval.Run) error {
	for _, c := range spec.Configs {
		if !c.Ranking.fused() {
			continue
		}
		// A run ranks documents: the terms each chunk holds, which cost more
		// than the fusion itself, are not needed.
		hits, err := ix.Fuse(ch, msrag.SearchOptions{K: spec.K, ChannelK: spec.ChannelK, Fusion: c.Fusion, SkipTerms: true})
		if err != nil {
			return fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		maps.Copy(runs[c.Name], msrag.EvalRun(ids, hits))
	}
	return nil
}

// addLearned checks spec's fusion models against the index and the queries
// and adds their configurations, and those of cross-validation.
func addLearned(spec Spec, ix msrag.Searcher, queries []corpus.Query) ([]Config, error) {
	configs := slices.Clone(spec.Configs)
	if m := spec.FusionModel; m != nil {
		if err := checkUnseen(spec, ix, m, queries); err != nil {
			return nil, err
		}
		if err := checkFused(served(spec, ix), "the fusion model", m); err != nil {
			return nil, err
		}
		lc, err := learnedConfigs(m)
		if err != nil {
			return nil, err
		}
		configs = append(configs, lc...)
	}
	if spec.Builtin != "" {
		m, err := tune.Builtin(spec.Builtin, ix)
		if err != nil {
			return nil, err
		}
		if err := checkUnseen(spec, ix, m, queries); err != nil {
			return nil, fmt.Errorf("built-in fusion %s: %w", spec.Builtin, err)
		}
		if err := checkFused(served(spec, ix), "the built-in fusion "+spec.Builtin, m); err != nil {
			return nil, err
		}
		f, _, err := m.Chosen()
		if err != nil {
			return nil, err
		}
		configs = append(configs, Config{Name: spec.Builtin, Ranking: ByLearned, Fusion: f})
	}
	if spec.CVFolds > 1 {
		configs = append(configs, cvConfigs...)
	}
	return configs, nil
}

// checkUnseen refuses a fusion model that does not serve the index or was
// trained on any of the queries.
func checkUnseen(spec Spec, ix msrag.Searcher, m *tune.FusionModel, queries []corpus.Query) error {
	if err := tune.CheckFusionModel(ix, m); err != nil {
		return err
	}
	ids := queryIDs(queries)
	if seen, tr := m.Overlap(filepath.Base(filepath.Clean(spec.Dataset)), ids); len(seen) > 0 {
		return fmt.Errorf("experiment: the fusion model was trained on %d of these %d queries (%q, ...: %s split %s); evaluate it on queries it has not seen",
			len(seen), len(ids), seen[0], tr.Dataset, tr.Split)
	}
	return nil
}

// crossValidate adds the runs of the cross-validated configurations.
func crossValidate(spec Spec, ix msrag.Searcher, queries []corpus.Query, batches []*fusion.Lists, qrels eval.Qrels, runs map[string]eval.Run) error {
	if spec.CVFolds < 2 {
		return nil
	}
	set, err := tune.NewSet(ix, queryIDs(queries), batches, qrels)
	if err != nil {
		return err
	}
	lin, routed, err := tune.CrossValidate(set, spec.group, tune.Options{Folds: spec.CVFolds, Log: spec.Log}, spec.K)
	if err != nil {
		return fmt.Errorf("experiment: cross-validation: %w", err)
	}
	runs["learned-cv"], runs["learned+router-cv"] = lin, routed
	return nil
}

// ErrCVGroups is wrapped by the errors that refuse Spec.CVGroup: given
// without cross-validation, matching no query id, or making fewer groups
// than folds.
var ErrCVGroups = errors.New("the cross-validation groups cannot be used")

// group is the cross-validation group of query id: Spec.CVGroup's first
// submatch, else its whole match; without a match (or a CVGroup), the
// query alone.
func (s Spec) group(id string) string {
	if s.CVGroup == nil {
		return id
	}
	m := s.CVGroup.FindStringSubmatch(id)
	switch {
	case len(m) > 1:
		return m[1]
	case len(m) == 1:
		return m[0]
	}
	return id
}

// checkGroups refuses, once the queries are read and before any work,
// a Spec.CVGroup that matches none of their ids (every query would be a
// group of its own, as without it) or that makes fewer groups than
// Spec.CVFolds (one group: no fold could be held out).
func checkGroups(spec Spec, ds *corpus.Dataset, queries []corpus.Query) error {
	re := spec.CVGroup
	if re == nil || spec.CVFolds < 2 {
		return nil
	}
	groups := map[string]bool{}
	matched := false
	for _, q := range queries {
		groups[spec.group(q.ID)] = true
		matched = matched || re.MatchString(q.ID)
	}
	where := fmt.Sprintf("%d queries of %s split %s", len(queries), filepath.Base(filepath.Clean(ds.Dir)), spec.Split)
	switch {
	case len(queries) == 0:
		return nil
	case !matched:
		return fmt.Errorf("experiment: --cv-group (Spec.CVGroup) %q matches none of the ids of the %s (such as %q): %w",
			re, where, queries[0].ID, ErrCVGroups)
	case len(groups) < spec.CVFolds:
		return fmt.Errorf("experiment: --cv-group (Spec.CVGroup) %q puts the %s in %d group(s) (such as %q), fewer than the %d folds of --cv-folds (Spec.CVFolds): %w",
			re, where, len(groups), spec.group(queries[0].ID), spec.CVFolds, ErrCVGroups)
	}
	return nil
}

// queryIDs lists the queries' ids.
func queryIDs(queries []corpus.Query) []string {
	ids := make([]string, len(queries))
	for i, q := range queries {
		ids[i] = q.ID
	}
	return ids
}

// newReport starts results.json with what describes the run.
func newReport(spec Spec, ds *corpus.Dataset, ix msrag.Searcher, info report.IndexInfo, queries int) *report.Eval {
	m := ix.Manifest()
	e := &report.Eval{
		Created: time.Now().UTC(),
		Dataset: filepath.Base(filepath.Clean(ds.Dir)), DatasetDir: ds.Dir, Split: spec.Split,
		Model: report.Model{Name: m.Model.Name, ModelSHA256: m.Model.ModelSHA256, TokenizerSHA256: m.Model.TokenizerSHA256,
			Dims: m.Model.Dims, MaxTokens: m.Model.MaxTokens, Precision: m.Model.Precision},
		K: spec.K, ChannelK: spec.ChannelK, Docs: ix.NumDocs(), Queries: queries, Index: info,
		Embedding: spec.Build.Embedding.String(),
	}
	if spec.Build.Tokenizer != nil {
		e.Embedding = msrag.NoModel
	}
	if slices.ContainsFunc(spec.Configs, func(c Config) bool { return c.Name == fusion.DefaultHybrid }) {
		e.DefaultHybrid = fusion.DefaultHybrid
	}
	e.Build = msrag.CurrentBuild()
	e.MsragVersion, e.GoVersion = e.Build.String(), e.Build.GoVersion
	e.Index.Build = m.Build
	if id, err := msrag.IdentityOf(&m); err == nil {
		e.Index.Batching = id.Batching
	}
	if l := m.Late; l != nil {
		e.Late = &report.Late{SegmentTokens: l.SegmentTokens, Overlap: l.Overlap, Edges: l.Edges}
	}
	for _, wi := range m.Windows {
		if w := wi.Window(); w.Truncate {
			e.FullWindow = w.Size
		} else {
			e.Windows = append(e.Windows, w.Size)
		}
	}
	return e
}
