package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/report"
)

func init() {
	register(&cli.Command{
		Name:  "eval",
		Usage: "evaluate every window, RRF, MaxP, the full document and the oracle on a BEIR dataset",
		Description: "Builds one index of the dataset's corpus (every --windows size plus the full-document\n" +
			"window, documents embedded whole and truncated as MTEB does), or reuses the one in --index when\n" +
			"it matches (same model files, windows, full window, and corpus file: its size, mtime and sha256\n" +
			"are kept in INDEX.source.json; an index without that record, built by msrag index, is replaced\n" +
			"only with --rebuild). Embeds the split's queries once per --batch, searches every\n" +
			"window once and fuses the same chunk lists into every configuration:\n\n" +
			"  windows      each window alone (w100, w200, ...): chunks collapsed to documents by their best\n" +
			"  wSIZE        one window alone\n" +
			"  rrf          RRF over all windows; rrf=100+200 over a subset (named rrf-100+200)\n" +
			"  maxp         best chunk score over all windows; maxp=100+200 over a subset\n" +
			"  full         each document embedded whole, truncated to the model's maximum\n" +
			"  oracle       per query and metric the best single window, chosen with the labels (an\n" +
			"               upper bound, not a method; it adds every single window)\n\n" +
			"Writes into --out: results.json (every configuration x metric, means and per-query values,\n" +
			"model, windows, versions, timings), report.md, recall_at_k.{png,svg},\n" +
			"oracle_best_window.{png,svg}, runs/<config>.trec and runs/metrics.json, and prints the command\n" +
			"that checks every metric against pytrec_eval. Metrics are MTEB's at 1, 3, 5, 10, 20, 100 and\n" +
			"1000 plus cdr (correct-document recall) at 1, 2, 3, 5, 10; each query ranks --k documents, so\n" +
			"the @1000 metrics need --k 1000 to mean what MTEB's do.",
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "dataset", Required: true, Usage: "dataset directory in BEIR layout (corpus, queries, qrels/<split>.tsv)"},
			&cli.StringFlag{Name: "split", Value: "test", Usage: "qrels split; several joined by + (train+dev) are judged together"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory"},
			&cli.StringFlag{Name: "index", Usage: "index directory to reuse or build (default OUT/index)"},
			&cli.StringFlag{Name: "model", Value: onnx.DefaultModel, Usage: "model name, model directory, or " + msrag.HashEmbedderName + " (non-semantic, tests only)"},
			&cli.StringFlag{Name: "windows", Value: "100,200,500", Usage: "window sizes in content tokens"},
			&cli.StringFlag{Name: "configs", Value: "windows,rrf,maxp,full,oracle", Usage: "configurations (see above)"},
			&cli.IntFlag{Name: "k", Value: 100, Usage: "documents ranked per query (1000 for MTEB's @1000 metrics)"},
			&cli.IntFlag{Name: "window-k", Value: 100, Usage: "chunks each window's index returns per query"},
			&cli.Float64Flag{Name: "rrf-c", Value: 1, Usage: "RRF constant c"},
			&cli.IntFlag{Name: "rank-base", Value: 0, Usage: "rank of a window's top chunk in RRF"},
			&cli.IntFlag{Name: "batch", Value: 1024, Usage: "queries embedded and searched at once"},
			&cli.IntFlag{Name: "workers", Usage: "tokenizer goroutines when building (0: all cores)"},
			&cli.BoolFlag{Name: "rebuild", Usage: "build the index even when the one in --index matches"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
		}, corpusFlags()...), deviceFlags()...),
		Action: evalAction,
	})
}

// evalConfig is one configuration to fuse and score.
type evalConfig struct {
	name, kind string
	windows    []int
	fusion     string // SearchOptions.Fusion; "" for the oracle
}

// parseConfigs expands --configs against the window sizes.
func parseConfigs(s string, windows []int) ([]evalConfig, error) {
	var out []evalConfig
	seen := map[string]bool{}
	add := func(c evalConfig) {
		if !seen[c.name] {
			seen[c.name] = true
			out = append(out, c)
		}
	}
	single := func(w int) evalConfig {
		return evalConfig{name: "w" + strconv.Itoa(w), kind: report.KindWindow, windows: []int{w}, fusion: "w=" + strconv.Itoa(w)}
	}
	sizes := func(tok, list string) ([]int, error) {
		var ws []int
		for _, f := range strings.Split(list, "+") {
			w, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || !slices.Contains(windows, w) {
				return nil, usagef("eval: --configs %q: %q: %q is not one of the windows %s", s, tok, f, fmtInts(windows))
			}
			if slices.Contains(ws, w) {
				return nil, usagef("eval: --configs %q: %q repeats %d", s, tok, w)
			}
			ws = append(ws, w)
		}
		return ws, nil
	}
	oracle := false
	for _, tok := range strings.Split(s, ",") {
		tok = strings.ToLower(strings.TrimSpace(tok))
		switch {
		case tok == "":
			continue
		case tok == "windows":
			for _, w := range windows {
				add(single(w))
			}
		case tok == "rrf" || tok == "maxp":
			add(evalConfig{name: tok, kind: tok, windows: slices.Clone(windows), fusion: tok})
		case strings.HasPrefix(tok, "rrf=") || strings.HasPrefix(tok, "maxp="):
			kind, list, _ := strings.Cut(tok, "=")
			ws, err := sizes(tok, list)
			if err != nil {
				return nil, err
			}
			name := kind + "-" + strings.ReplaceAll(fmtInts(ws), ",", "+")
			if len(ws) == len(windows) {
				name = kind
			}
			add(evalConfig{name: name, kind: kind, windows: ws, fusion: kind})
		case tok == "full":
			add(evalConfig{name: "full", kind: report.KindFull, fusion: "full"})
		case tok == "oracle":
			oracle = true
		case strings.HasPrefix(tok, "w"):
			ws, err := sizes(tok, strings.TrimPrefix(strings.TrimPrefix(tok, "w"), "="))
			if err != nil || len(ws) != 1 {
				return nil, usagef("eval: --configs %q: %q: want wSIZE with SIZE one of the windows %s", s, tok, fmtInts(windows))
			}
			add(single(ws[0]))
		default:
			return nil, usagef("eval: --configs %q: unknown configuration %q (want windows, wSIZE, rrf, rrf=A+B, maxp, maxp=A+B, full, oracle)", s, tok)
		}
	}
	if oracle {
		for _, w := range windows {
			add(single(w))
		}
		add(evalConfig{name: "oracle", kind: report.KindOracle})
	}
	if len(out) == 0 {
		return nil, usagef("eval: --configs %q names no configuration", s)
	}
	return out, nil
}

func evalAction(c *cli.Context) error {
	start := time.Now()
	if c.NArg() != 0 {
		return usagef("eval: unexpected arguments %v", c.Args().Slice())
	}
	windows, err := parseInts("windows", c.String("windows"))
	if err != nil {
		return err
	}
	configs, err := parseConfigs(c.String("configs"), windows)
	if err != nil {
		return err
	}
	k, windowK, bs := c.Int("k"), c.Int("window-k"), c.Int("batch")
	if k < 1 || windowK < 1 || bs < 1 {
		return usagef("eval: --k, --window-k and --batch must be at least 1")
	}
	if c.Float64("rrf-c") <= 0 {
		return usagef("eval: --rrf-c must be positive")
	}
	eo, err := embedderOptions(c)
	if err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	split := c.String("split")
	out := c.String("out")
	ixDir := c.String("index")
	if ixDir == "" {
		ixDir = filepath.Join(out, "index")
	}
	needFull := slices.ContainsFunc(configs, func(x evalConfig) bool { return x.kind == report.KindFull })

	ds, err := corpus.OpenDataset(c.String("dataset"))
	if err != nil {
		return err
	}
	qrels, qrelsPath, err := readSplit(ds, split)
	if err != nil {
		return err
	}
	queries, err := ds.ReadQueries(corpus.Options{})
	if err != nil {
		return err
	}
	queries = slices.DeleteFunc(queries, func(q corpus.Query) bool { return qrels[q.ID] == nil })
	if len(queries) == 0 {
		return fmt.Errorf("eval: no query of %s has judgements in %s", ds.Queries, qrelsPath)
	}
	if err := os.MkdirAll(filepath.Join(out, "runs"), 0o755); err != nil {
		return fmt.Errorf("eval: %w", err)
	}

	gpus, err := gpuList(c)
	if err != nil {
		return err
	}
	emb, err := msrag.OpenEmbedder(c.String("model"), eo, gpus...)
	if err != nil {
		return err
	}
	if cl, ok := emb.(interface{ Close() error }); ok {
		defer cl.Close()
	}
	var progress io.Writer
	if !c.Bool("quiet") {
		progress = stderr
	}
	src := sourceOf(ds.Corpus)
	ix, info, tm, err := openOrBuild(c, emb, ds, ixDir, windows, needFull, src, progress)
	if err != nil {
		return err
	}
	defer ix.Close()

	// Search in batches; fuse every configuration from the same chunk lists.
	runs := make([]eval.Run, len(configs))
	for i := range runs {
		runs[i] = eval.Run{}
	}
	for lo := 0; lo < len(queries); lo += bs {
		batch := queries[lo:min(lo+bs, len(queries))]
		texts := make([]string, len(batch))
		for i, q := range batch {
			texts[i] = q.Text
		}
		t0 := time.Now()
		vecs, err := ix.EmbedQueries(c.Context, texts)
		if err != nil {
			return fmt.Errorf("eval: queries %d to %d of %s: %w", lo+1, lo+len(batch), ds.Queries, err)
		}
		t1 := time.Now()
		ch, err := ix.SearchVectors(c.Context, vecs, windowK)
		if err != nil {
			return fmt.Errorf("eval: queries %d to %d of %s: %w", lo+1, lo+len(batch), ds.Queries, err)
		}
		t2 := time.Now()
		for ci, cf := range configs {
			if cf.kind == report.KindOracle {
				continue
			}
			opts := msrag.SearchOptions{K: k, WindowK: windowK, Fusion: cf.fusion, RRFC: c.Float64("rrf-c"), RankBase: c.Int("rank-base")}
			if cf.kind == report.KindRRF || cf.kind == report.KindMaxP {
				opts.Windows = cf.windows
			}
			hits, err := ix.Fuse(ch, opts)
			if err != nil {
				return fmt.Errorf("eval: configuration %s: %w", cf.name, err)
			}
			for qi, q := range batch {
				row := make([]eval.Hit, len(hits[qi]))
				for j, h := range hits[qi] {
					row[j] = eval.Hit{Doc: h.DocID, Score: h.Score}
				}
				runs[ci][q.ID] = row
			}
		}
		t3 := time.Now()
		tm.Embed += t1.Sub(t0).Seconds()
		tm.Search += t2.Sub(t1).Seconds()
		tm.Fuse += t3.Sub(t2).Seconds()
		if progress != nil {
			fmt.Fprintf(progress, "eval: searched %d of %d queries\n", lo+len(batch), len(queries))
		}
	}

	// Score.
	t0 := time.Now()
	metrics := eval.DefaultMetrics()
	res := &report.Eval{
		MsragVersion: msragVersion(), GoVersion: runtime.Version(), Created: time.Now().UTC(),
		Dataset: filepath.Base(filepath.Clean(ds.Dir)), DatasetDir: ds.Dir, Split: split,
		Model:   modelOf(ix),
		Windows: windows, K: k, WindowK: windowK, RRFC: c.Float64("rrf-c"), RankBase: c.Int("rank-base"),
		Docs: ix.NumDocs(), Queries: len(queries), Index: info,
	}
	if ix.HasFull() {
		for _, w := range ix.Manifest().Windows {
			if w.Full {
				res.FullWindow = w.Size
			}
		}
	}
	checkable := map[string]eval.Results{}
	var runFiles []string
	var oNames []string
	var oResults []eval.Results
	for ci, cf := range configs {
		if cf.kind == report.KindOracle {
			res.Configs = append(res.Configs, report.Config{Name: cf.name, Kind: cf.kind, UpperBound: true})
			continue
		}
		r, err := eval.Evaluate(qrels, runs[ci], metrics...)
		if err != nil {
			return fmt.Errorf("eval: configuration %s: %w", cf.name, err)
		}
		rel := filepath.Join("runs", cf.name+".trec")
		if err := writeRunFile(filepath.Join(out, rel), runs[ci], cf.name); err != nil {
			return err
		}
		runFiles = append(runFiles, filepath.Join(out, rel))
		checkable[cf.name] = r
		res.Configs = append(res.Configs, report.Config{Name: cf.name, Kind: cf.kind, Windows: cf.windows, RunFile: rel, Results: r})
		if cf.kind == report.KindWindow {
			oNames, oResults = append(oNames, cf.name), append(oResults, r)
		}
	}
	if o := res.Config("oracle"); o != nil {
		or, err := eval.Oracle(oNames, oResults)
		if err != nil {
			return fmt.Errorf("eval: oracle: %w", err)
		}
		o.Results = or.Results
		res.Oracle = &report.Oracle{Over: oNames, HistogramMetric: "ndcg_cut_10", Best: or.Best,
			BestCounts: map[string][]int{}, Ties: map[string]int{}}
		for _, m := range []string{"ndcg_cut_10", "cdr_1"} {
			res.Oracle.BestCounts[m] = or.BestCounts(m)
			res.Oracle.Ties[m] = allEqual(oResults, m)
		}
	}
	tm.Eval = time.Since(t0).Seconds()
	tm.Total = time.Since(start).Seconds()
	res.Timings = tm

	metricsPath := filepath.Join(out, "runs", "metrics.json")
	if err := writeJSON(metricsPath, checkable); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(out, "results.json"), res); err != nil {
		return err
	}
	if err := writeWith(filepath.Join(out, "report.md"), func(w io.Writer) error { return report.WriteMarkdown(w, res) }); err != nil {
		return err
	}
	plots, err := report.WritePlots(out, res)
	if err != nil {
		return err
	}
	if qrelsPath == "" {
		qrelsPath = filepath.Join(out, "runs", "qrels-"+split+".tsv")
		if err := writeWith(qrelsPath, func(w io.Writer) error { return eval.WriteQrels(w, qrels, eval.QrelsTSV) }); err != nil {
			return err
		}
	}
	if err := report.WriteSummary(c.App.Writer, res); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "eval: wrote %s, %s, %s and %d run files in %s (%.1f s)\n",
		filepath.Join(out, "results.json"), filepath.Join(out, "report.md"), strings.Join(plots, ", "), len(runFiles), filepath.Join(out, "runs"), tm.Total)
	fmt.Fprintf(c.App.Writer, "Check every metric against pytrec_eval (from the repository root):\n\n  %s\n",
		checkCommand(qrelsPath, metricsPath, runFiles))
	return nil
}

// allEqual counts the queries on which every result has the same value of metric.
func allEqual(rs []eval.Results, metric string) int {
	n := 0
	for qid, vals := range rs[0].PerQuery {
		same := true
		for _, r := range rs[1:] {
			if r.PerQuery[qid][metric] != vals[metric] {
				same = false
				break
			}
		}
		if same {
			n++
		}
	}
	return n
}

// checkCommand is the scripts/check_metrics.py command line for the run files.
func checkCommand(qrels, results string, runs []string) string {
	args := []string{".cache/venv/eval/bin/python", "scripts/check_metrics.py", "--qrels", shellQuote(qrels), "--results", shellQuote(results)}
	for _, r := range runs {
		args = append(args, shellQuote(r))
	}
	return strings.Join(args, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readSplit reads the qrels of split, or of several splits joined by "+"
// (QMSum's "train+dev"). The path is returned when it is one TSV file that
// scripts/check_metrics.py reads as it is, "" otherwise.
func readSplit(ds *corpus.Dataset, split string) (eval.Qrels, string, error) {
	q := eval.Qrels{}
	from := map[string]string{} // query id -> split that judged it first
	for _, sp := range strings.Split(split, "+") {
		if sp == "" {
			return nil, "", fmt.Errorf("eval: --split %q: empty split name", split)
		}
		rows, err := ds.ReadQrels(sp)
		if err != nil {
			return nil, "", err
		}
		for _, r := range rows {
			if f, ok := from[r.QueryID]; ok && f != sp {
				return nil, "", fmt.Errorf("eval: query %q is judged in both split %q and split %q of %s", r.QueryID, f, sp, ds.Dir)
			}
			from[r.QueryID] = sp
			if q[r.QueryID] == nil {
				q[r.QueryID] = map[string]int{}
			}
			q[r.QueryID][r.DocID] = r.Score
		}
	}
	if len(q) == 0 {
		return nil, "", fmt.Errorf("eval: qrels of split %q of %s have no judgements", split, ds.Dir)
	}
	path := filepath.Join(ds.Dir, "qrels", split+".tsv")
	if _, err := os.Stat(path); err != nil || strings.Contains(split, "+") {
		path = ""
	}
	return q, path, nil
}

func modelOf(ix *msrag.Index) report.Model {
	m := ix.Manifest().Model
	return report.Model{Name: m.Name, ModelSHA256: m.ModelSHA256, TokenizerSHA256: m.TokenizerSHA256, Dims: m.Dims, MaxTokens: m.MaxTokens}
}

// msragVersion is the module version, with the VCS revision when the binary
// was built from a checkout.
func msragVersion() string {
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

// corpusSource is INDEX.source.json: which corpus an index was built from.
// A corpus that is a directory of Parquet files counts as the concatenation
// of its files in name order: Size and SHA256 cover them all, MTime is the
// latest.
type corpusSource struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	MTime  string `json:"mtime"`
	SHA256 string `json:"sha256"`
	files  []string
}

// sourceOf describes the corpus at path; the checksum is computed on demand.
func sourceOf(path string) *corpusSource {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	s := &corpusSource{Path: abs, files: []string{abs}}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		s.files, _ = filepath.Glob(filepath.Join(abs, "*.parquet"))
		slices.Sort(s.files)
	}
	var latest time.Time
	for _, f := range s.files {
		if st, err := os.Stat(f); err == nil {
			s.Size += st.Size()
			if st.ModTime().After(latest) {
				latest = st.ModTime()
			}
		}
	}
	s.MTime = latest.UTC().Format(time.RFC3339Nano)
	return s
}

func (s *corpusSource) checksum() error {
	if s.SHA256 != "" {
		return nil
	}
	h := sha256.New()
	for _, path := range s.files {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("eval: reading %s: %w", path, err)
		}
	}
	s.SHA256 = hex.EncodeToString(h.Sum(nil))
	return nil
}

// matches reports whether the corpus is the one recorded: same size, and the
// same mtime or, failing that, the same sha256.
func (s *corpusSource) matches(rec *corpusSource) (bool, error) {
	if s.Size != rec.Size {
		return false, nil
	}
	if s.MTime == rec.MTime && rec.SHA256 != "" {
		return true, nil
	}
	if err := s.checksum(); err != nil {
		return false, err
	}
	return s.SHA256 == rec.SHA256, nil
}

func sidecarPath(ixDir string) string { return filepath.Clean(ixDir) + ".source.json" }

// reuseIndex opens the index in ixDir if it matches; otherwise it returns nil
// and why not.
func reuseIndex(emb msrag.Embedder, ixDir string, windows []int, needFull bool, src *corpusSource) (*msrag.Index, string, error) {
	if _, err := os.Stat(filepath.Join(ixDir, "manifest.json")); err != nil {
		return nil, "no index in " + ixDir, nil
	}
	data, err := os.ReadFile(sidecarPath(ixDir))
	if err != nil {
		return nil, "no record of its corpus (" + filepath.Base(sidecarPath(ixDir)) + ")", nil
	}
	var rec corpusSource
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Sprintf("unreadable %s: %v", sidecarPath(ixDir), err), nil
	}
	if ok, err := src.matches(&rec); err != nil {
		return nil, "", err
	} else if !ok {
		return nil, fmt.Sprintf("it was built from another corpus (%s, %d bytes, sha256 %s)", rec.Path, rec.Size, rec.SHA256), nil
	}
	ix, err := msrag.OpenWith(msrag.OpenOptions{Embedder: emb}, ixDir)
	if err != nil {
		if errors.Is(err, msrag.ErrIndexMismatch) {
			return nil, err.Error(), nil
		}
		return nil, "it does not open: " + err.Error(), nil
	}
	var have []int
	for _, w := range ix.Manifest().Windows {
		if !w.Full {
			if w.Stride != w.Size {
				ix.Close()
				return nil, fmt.Sprintf("window %d has stride %d", w.Size, w.Stride), nil
			}
			have = append(have, w.Size)
		}
	}
	want := slices.Sorted(slices.Values(windows))
	slices.Sort(have)
	switch {
	case !slices.Equal(have, want):
		ix.Close()
		return nil, fmt.Sprintf("it has windows %s, not %s", fmtInts(have), fmtInts(want)), nil
	case needFull && !ix.HasFull():
		ix.Close()
		return nil, "it has no full-document window", nil
	case ix.Manifest().Shard != "":
		ix.Close()
		return nil, "it holds shard " + ix.Manifest().Shard + " only", nil
	}
	return ix, "same model, windows, full window and corpus", nil
}

// openOrBuild reuses the index in ixDir when it matches, or builds it.
func openOrBuild(c *cli.Context, emb msrag.Embedder, ds *corpus.Dataset, ixDir string, windows []int, needFull bool,
	src *corpusSource, progress io.Writer) (*msrag.Index, report.IndexInfo, report.Timings, error) {
	var tm report.Timings
	stderr := c.App.ErrWriter
	t0 := time.Now()
	why := "--rebuild"
	if !c.Bool("rebuild") {
		ix, reason, err := reuseIndex(emb, ixDir, windows, needFull, src)
		if err != nil {
			return nil, report.IndexInfo{}, tm, err
		}
		if ix != nil {
			tm.Open = time.Since(t0).Seconds()
			fmt.Fprintf(stderr, "eval: reusing index %s (%s)\n", ixDir, reason)
			return ix, report.IndexInfo{Dir: ixDir, Reused: true, Why: reason}, tm, nil
		}
		why = reason
		// An index that eval did not build (msrag index) is not replaced unasked.
		_, errMan := os.Stat(filepath.Join(ixDir, "manifest.json"))
		_, errSide := os.Stat(sidecarPath(ixDir))
		if errMan == nil && errSide != nil {
			return nil, report.IndexInfo{}, tm, fmt.Errorf("eval: index %s was not built by msrag eval and does not fit (%s); "+
				"pass --rebuild to replace it, or another --index", ixDir, reason)
		}
	}
	fmt.Fprintf(stderr, "eval: building index %s: %s\n", ixDir, why)
	if err := src.checksum(); err != nil {
		return nil, report.IndexInfo{}, tm, err
	}
	rd, err := ds.OpenCorpus(corpusOptions(c))
	if err != nil {
		return nil, report.IndexInfo{}, tm, err
	}
	defer rd.Close()
	// The old record goes first: an interrupted build must not leave a new
	// index next to a stale record, nor an old index next to a new one.
	if err := os.Remove(sidecarPath(ixDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, report.IndexInfo{}, tm, fmt.Errorf("eval: %w", err)
	}
	t0 = time.Now()
	ix, stats, err := msrag.BuildWithStats(c.Context, rd, msrag.Config{
		Embedder: emb, Out: ixDir, Windows: windows, Full: true, Workers: c.Int("workers"), Progress: progress,
	})
	if err != nil {
		return nil, report.IndexInfo{}, tm, err
	}
	tm.Build = time.Since(t0).Seconds()
	tm.BuildEmbed, tm.BuildTokens = stats.EmbedBusy.Seconds(), stats.Tokens
	if err := writeJSON(sidecarPath(ixDir), src); err != nil {
		ix.Close()
		return nil, report.IndexInfo{}, tm, err
	}
	fmt.Fprintf(stderr, "eval: built %s: %d docs, %d unique chunks, %v vectors per window, %d tokens, %.1f s (embedder busy %.0f%%)\n",
		ixDir, stats.Docs, stats.UniqueChunks, stats.Vectors, stats.Tokens, tm.Build, 100*tm.BuildEmbed/tm.Build)
	return ix, report.IndexInfo{Dir: ixDir, Why: why}, tm, nil
}

func writeRunFile(path string, run eval.Run, tag string) error {
	return writeWith(path, func(w io.Writer) error { return eval.WriteRun(w, run, tag) })
}

func writeJSON(path string, v any) error {
	return writeWith(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
}

// writeWith writes a file through fn, atomically (createOutput).
func writeWith(path string, fn func(io.Writer) error) error {
	w, commit, err := createOutput(path, nil)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := fn(w); err != nil {
		commit(false)
		return fmt.Errorf("eval: writing %s: %w", path, err)
	}
	if err := commit(true); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}
