package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/report"
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
	start := time.Now()
	spec, err := spec.withDefaults()
	if err != nil {
		return nil, err
	}
	ds, err := corpus.OpenDataset(spec.Dataset)
	if err != nil {
		return nil, err
	}
	qrels, queries, err := judgedQueries(ds, spec.Split)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(spec.Out, "runs"), 0o755); err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	var tm report.Timings
	ix, info, err := openOrBuild(ctx, spec, ds, &tm)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	for _, c := range spec.Configs {
		if err := ix.CheckFusion(c.Fusion); !c.Oracle && err != nil {
			return nil, fmt.Errorf("experiment: configuration %s: %w", c.Name, err)
		}
	}
	runs, err := search(ctx, spec, ix, queries, &tm)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	res := &Result{Runs: runs, Qrels: qrels, Report: newReport(spec, ds, ix, info, len(queries))}
	if res.Report.DatasetFingerprint, err = fingerprint(ds, spec.Split, info.CorpusSHA256); err != nil {
		return nil, err
	}
	res.Report.MTEB = spec.MTEB.resolve(ds, res.Report.DatasetFingerprint)
	if err := score(spec, res); err != nil {
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

// judgedQueries reads the split's judgements and the queries they judge.
func judgedQueries(ds *corpus.Dataset, split string) (eval.Qrels, []corpus.Query, error) {
	j, err := ds.ReadJudgements(split)
	if err != nil {
		return nil, nil, err
	}
	if len(j) == 0 {
		return nil, nil, fmt.Errorf("experiment: the qrels of split %q of %s have no judgements", split, ds.Dir)
	}
	queries, err := ds.ReadQueries(corpus.Options{})
	if err != nil {
		return nil, nil, err
	}
	queries = slices.DeleteFunc(queries, func(q corpus.Query) bool { return j[q.ID] == nil })
	if len(queries) == 0 {
		return nil, nil, fmt.Errorf("experiment: no query of %s has judgements in split %q", ds.Queries, split)
	}
	return eval.Qrels(j), queries, nil
}

// search embeds and searches the queries batch by batch and fuses every
// configuration from the same chunk lists.
func search(ctx context.Context, spec Spec, ix *msrag.Index, queries []corpus.Query, tm *report.Timings) (map[string]eval.Run, error) {
	runs := map[string]eval.Run{}
	for _, c := range spec.Configs {
		if !c.Oracle {
			runs[c.Name] = eval.Run{}
		}
	}
	for lo := 0; lo < len(queries); lo += spec.Batch {
		batch := queries[lo:min(lo+spec.Batch, len(queries))]
		if err := searchBatch(ctx, spec, ix, batch, runs, tm); err != nil {
			return nil, fmt.Errorf("experiment: queries %d to %d: %w", lo+1, lo+len(batch), err)
		}
		fmt.Fprintf(spec.Log, "eval: searched %d of %d queries\n", lo+len(batch), len(queries))
	}
	return runs, nil
}

func searchBatch(ctx context.Context, spec Spec, ix *msrag.Index, batch []corpus.Query, runs map[string]eval.Run, tm *report.Timings) error {
	texts := make([]string, len(batch))
	for i, q := range batch {
		texts[i] = q.Text
	}
	t0 := time.Now()
	vecs, err := ix.EmbedQueries(ctx, texts)
	if err != nil {
		return err
	}
	t1 := time.Now()
	ch, err := ix.SearchVectors(ctx, vecs, spec.WindowK)
	if err != nil {
		return err
	}
	t2 := time.Now()
	for _, c := range spec.Configs {
		if c.Oracle {
			continue
		}
		hits, err := ix.Fuse(ch, msrag.SearchOptions{K: spec.K, WindowK: spec.WindowK, Fusion: c.Fusion})
		if err != nil {
			return fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		for qi, q := range batch {
			row := make([]eval.Hit, len(hits[qi]))
			for j, h := range hits[qi] {
				row[j] = eval.Hit{Doc: h.DocID, Score: h.Score}
			}
			runs[c.Name][q.ID] = row
		}
	}
	tm.Embed += t1.Sub(t0).Seconds()
	tm.Search += t2.Sub(t1).Seconds()
	tm.Fuse += time.Since(t2).Seconds()
	return nil
}

// newReport starts results.json with what describes the run.
func newReport(spec Spec, ds *corpus.Dataset, ix *msrag.Index, info report.IndexInfo, queries int) *report.Eval {
	m := ix.Manifest()
	e := &report.Eval{
		MsragVersion: version(), GoVersion: runtime.Version(), Created: time.Now().UTC(),
		Dataset: filepath.Base(filepath.Clean(ds.Dir)), DatasetDir: ds.Dir, Split: spec.Split,
		Model: report.Model{Name: m.Model.Name, ModelSHA256: m.Model.ModelSHA256, TokenizerSHA256: m.Model.TokenizerSHA256,
			Dims: m.Model.Dims, MaxTokens: m.Model.MaxTokens},
		K: spec.K, WindowK: spec.WindowK, Docs: ix.NumDocs(), Queries: queries, Index: info,
	}
	for _, w := range ix.Windows() {
		if w.Truncate {
			e.FullWindow = w.Size
		} else {
			e.Windows = append(e.Windows, w.Size)
		}
	}
	return e
}

// version is the module version, with the VCS revision when the binary was
// built from a checkout.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v
}
