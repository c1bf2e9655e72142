package experiment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/report"
)

// openOrBuild reuses the index in spec.Index when it matches, or builds it,
// holding the index's lock from the decision until the index is open.
func openOrBuild(ctx context.Context, spec Spec, ds *corpus.Dataset, tm *report.Timings) (*msrag.Index, report.IndexInfo, error) {
	lock, err := msrag.LockIndex(ctx, spec.Index, spec.Wait)
	if err != nil {
		return nil, report.IndexInfo{}, err
	}
	defer lock.Unlock()
	t0 := time.Now()
	src := sourceOf(ds.Corpus)
	why := "rebuild asked for"
	if !spec.Rebuild {
		ix, reason, err := reuseIndex(spec, src)
		if err != nil || ix != nil {
			tm.Open = time.Since(t0).Seconds()
			fmt.Fprintf(spec.Log, "eval: reusing index %s (%s)\n", spec.Index, reason)
			return ix, report.IndexInfo{Dir: spec.Index, Reused: true, Why: reason, CorpusSHA256: src.SHA256}, err
		}
		why = reason
		if len(indexDirs(spec.Index)) > 0 && !hasSource(spec.Index) {
			// An index built by msrag index is not replaced unasked.
			return nil, report.IndexInfo{}, fmt.Errorf("experiment: index %s was built by msrag index and does not fit this evaluation: %s; "+
				"pass --rebuild (Spec.Rebuild) to replace it, or use another index directory", spec.Index, reason)
		}
	}
	fmt.Fprintf(spec.Log, "eval: building index %s: %s\n", spec.Index, why)
	ix, err := build(ctx, spec, ds, src, lock, tm)
	return ix, report.IndexInfo{Dir: spec.Index, Why: why, CorpusSHA256: src.SHA256}, err
}

func hasSource(ixDir string) bool {
	rec, err := readSource(ixDir)
	return err == nil && rec != nil
}

// reuseIndex opens the index in spec.Index if it matches; otherwise it
// returns nil and why not.
func reuseIndex(spec Spec, src *corpusSource) (*msrag.Index, string, error) {
	if len(indexDirs(spec.Index)) == 0 {
		return nil, "no index in " + spec.Index, nil
	}
	rec, err := readSource(spec.Index)
	if err != nil {
		return nil, err.Error(), nil
	}
	if rec == nil {
		return reuseRecorded(spec, src)
	}
	if ok, err := src.matches(rec); err != nil {
		return nil, "", err
	} else if !ok {
		return nil, fmt.Sprintf("it was built from another corpus (%s, %d bytes, sha256 %s)", rec.Path, rec.Size, rec.SHA256), nil
	}
	if m, err := msrag.ReadManifest(spec.Index); err != nil {
		return nil, "it does not open: " + err.Error(), nil
	} else if why := modelMismatch(m, spec); why != "" {
		return nil, why, nil
	}
	ix, err := msrag.OpenWith(msrag.OpenOptions{Embedder: spec.Embedder}, spec.Index)
	if err != nil {
		if errors.Is(err, msrag.ErrIndexMismatch) {
			return nil, err.Error(), nil
		}
		return nil, "it does not open: " + err.Error(), nil
	}
	why := mismatch(ix, spec.layout())
	if ix.Manifest().Shard != "" {
		why = "it holds shard " + ix.Manifest().Shard + " only"
	}
	if why == "" {
		why = lexicalMismatch(ix.Manifest(), spec)
	}
	if why == "" {
		why = embeddingMismatch(ix.Manifest(), spec)
	}
	if want := msrag.EmbedderBatching(spec.Embedder); why == "" && want != "" && ix.Batching() != want {
		why = fmt.Sprintf("its texts were embedded with %s batching, the model now runs %s", ix.Batching(), want)
	}
	if why != "" {
		ix.Close()
		return nil, why, nil
	}
	return ix, "same model, windows, full window, embedding, batching and corpus", nil
}

// mismatch says why an open index does not have the channels wanted (in
// any order), or "" when it has; when none is lexical, its lexical
// channels, which the configurations cannot fuse, are left aside.
func mismatch(ix *msrag.Index, want msrag.Layout) string {
	have := ix.Layout()
	if len(want.Dense()) == len(want) {
		have = have.Dense()
	}
	return layoutMismatch(have, want)
}

// layoutMismatch says why have does not hold exactly the channels of want
// (in any order), or "".
func layoutMismatch(have, want msrag.Layout) string {
	if have.Diff(want).Same() {
		return ""
	}
	return fmt.Sprintf("it has windows %v, not %v", have.Descriptions(), want.Descriptions())
}

// unserved names the configurations that fuse a channel the layout lacks.
func unserved(configs []Config, layout msrag.Layout) []string {
	var names []string
	for _, c := range configs {
		if !c.Kind.fused() {
			continue
		}
		if _, err := c.Fusion.Select(layout); err != nil {
			names = append(names, c.Name)
		}
	}
	return names
}

// leaveOut drops from spec's default configurations those the index cannot
// serve (full, on an index msrag index built without --full), saying so in
// one line; reuseIndex has refused an index that lacks what configurations
// given in Spec.Configs need.
func leaveOut(spec Spec, ix *msrag.Index) []Config {
	out := unserved(spec.Configs, ix.Layout())
	if len(out) == 0 {
		return spec.Configs
	}
	fmt.Fprintf(spec.Log, "eval: leaving out %s: index %s has no full window (msrag index builds it with --full)\n", strings.Join(out, ", "), spec.Index)
	return slices.DeleteFunc(slices.Clone(spec.Configs), func(c Config) bool { return slices.Contains(out, c.Name) })
}

// served is the evaluation's layout less the channels the index lacks (the
// full window's, on an index msrag index built without --full).
func served(spec Spec, ix *msrag.Index) msrag.Layout {
	have := ix.Layout()
	return slices.DeleteFunc(spec.layout(), func(c msrag.Channel) bool { return have.Index(c.Name()) < 0 })
}

// lexicalMismatch says why an index's lexical windows are not those spec
// asks for (analyzer, k1, b), or "" when they are or none is asked for.
func lexicalMismatch(m msrag.Manifest, spec Spec) string {
	want, have := spec.Lexical, m.Lexical
	if want == nil || have == nil {
		return ""
	}
	id := want.Analyzer.Identity()
	if have.Analyzer.Name != id.Name || have.Analyzer.Version != id.Version || have.K1 != want.BM25.K1 || have.B != want.BM25.B {
		return fmt.Sprintf("its lexical windows are %s %s k1 %v b %v, not %s %s k1 %v b %v",
			have.Analyzer.Name, have.Analyzer.Version, have.K1, have.B, id.Name, id.Version, want.BM25.K1, want.BM25.B)
	}
	return ""
}

// modelMismatch says, before the index is opened, why its model is not
// the one spec asks for: an index without dense windows for an evaluation
// of a model, one with them for an evaluation without, or windows cut by
// another tokenizer; "" when it is.
func modelMismatch(m *msrag.Manifest, spec Spec) string {
	switch {
	case spec.Tokenizer == nil && m.Model.None():
		return "it has no dense windows (built with --model none)"
	case spec.Tokenizer == nil:
		return ""
	case !m.Model.None():
		return fmt.Sprintf("it has dense windows of model %s, and this evaluation has no model", m.Model.Name)
	case m.Model.TokenizerSHA256 != spec.Tokenizer.SHA256:
		return fmt.Sprintf("its windows were cut by a tokenizer of sha256 %s, not by %s (sha256 %s)", m.Model.TokenizerSHA256, spec.Tokenizer.Name, spec.Tokenizer.SHA256)
	}
	return ""
}

// embeddingMismatch says why an index's embedding is not the one spec
// asks for, or "" when it is (an evaluation without a model embeds none).
func embeddingMismatch(m msrag.Manifest, spec Spec) string {
	if spec.Tokenizer != nil {
		return ""
	}
	have, err := msrag.ParseEmbedding(m.Embedding)
	switch {
	case err != nil:
		return err.Error()
	case have != spec.Embedding:
		return fmt.Sprintf("its windows were embedded %s, not %s", have, spec.Embedding)
	case have == msrag.Late && m.Late == nil:
		return "it records no late segments"
	case have == msrag.Late && spec.LateOverlap != 0 && m.Late.Overlap != spec.LateOverlap:
		return fmt.Sprintf("its late segments overlap by %d tokens, not %d", m.Late.Overlap, spec.LateOverlap)
	case have == msrag.Late && spec.LateOverlap == 0 && m.Late.Overlap != late.DefaultOverlap(m.Late.SegmentTokens):
		return fmt.Sprintf("its late segments overlap by %d tokens, not the default %d", m.Late.Overlap, late.DefaultOverlap(m.Late.SegmentTokens))
	case have == msrag.Late && m.Late.Edges != spec.LateEdges.String():
		return fmt.Sprintf("its late windows pool edges %s, not %s", m.Late.Edges, spec.LateEdges)
	}
	return ""
}

// build builds the index under lock and records its corpus. The old record
// goes first: an interrupted build must not leave a new index next to a stale
// record, nor an old index next to a new one.
func build(ctx context.Context, spec Spec, ds *corpus.Dataset, src *corpusSource, lock *msrag.IndexLock, tm *report.Timings) (*msrag.Index, error) {
	if err := src.checksum(); err != nil {
		return nil, err
	}
	rd, err := ds.OpenCorpus(spec.Corpus)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if err := removeSource(spec.Index); err != nil {
		return nil, err
	}
	t0 := time.Now()
	ix, stats, err := msrag.BuildWithStats(ctx, rd, msrag.Config{
		Embedder: spec.Embedder, Tokenizer: spec.Tokenizer, Out: spec.Index, Windows: spec.indexWindows(), Workers: spec.Workers,
		Progress: spec.Progress, Lock: lock, Embedding: spec.Embedding, LateOverlap: spec.LateOverlap, LateEdges: spec.LateEdges,
		Lexical: spec.Lexical,
	})
	if err != nil {
		return nil, err
	}
	tm.Build = time.Since(t0).Seconds()
	tm.BuildEmbed, tm.BuildTokens = stats.EmbedBusy.Seconds(), stats.Tokens
	if err := src.write(spec.Index); err != nil {
		ix.Close()
		return nil, err
	}
	fmt.Fprintf(spec.Log, "eval: built %s (%s embedding): %d docs, %d unique chunks, %v vectors per window, %d tokens, %.1f s, %.0f tokens/s (embedder busy %.0f%%)\n",
		spec.Index, spec.Embedding, stats.Docs, stats.UniqueChunks, stats.Vectors, stats.Tokens, tm.Build, float64(stats.Tokens)/tm.Build, 100*tm.BuildEmbed/tm.Build)
	return ix, nil
}
