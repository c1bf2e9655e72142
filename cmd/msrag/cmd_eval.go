package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/report"
	"github.com/msrag/msrag/tune"
)

func init() {
	register(&cli.Command{
		Name:  "eval",
		Usage: "evaluate every window, fusion rules, the full document and the oracle on a BEIR dataset",
		Description: "Builds one index of the dataset's corpus (every --windows size plus the full-document\n" +
			"window, documents embedded whole and truncated as MTEB does), or reuses the one in --index when\n" +
			"it matches (same model files, windows, embedding, batching, every channel's parameters, and the corpus files\n" +
			"its manifest records: their sizes, times and sha256). An index eval built is rebuilt when it no longer\n" +
			"matches; one msrag index built is reused when it matches and replaced only with --rebuild; built\n" +
			"without --full, it serves every default configuration but full, which is left out, and a --configs\n" +
			"naming full is refused). Embeds the split's queries once per --batch, searches every\n" +
			"window once and fuses the same chunk lists into every configuration of --configs:\n\n" +
			"  windows      each window alone (w100, w200, ...): chunks collapsed to documents by their best\n" +
			"  oracle       per query and metric the best single window, chosen with the labels (an\n" +
			"               upper bound, not a method; it adds every single window)\n" +
			"  RULE         any --fusion of msrag search (w100, full, rrf, maxp, docrrf, combsum:norm=minmax,\n" +
			"               rrf=100+200, ...); parameters of one rule are separated by ';' here\n" +
			"               (rrf:c=60;base=1), since ',' separates configurations\n\n" +
			"Writes into --out: results.json (every configuration x metric, means and per-query values,\n" +
			"model, windows, versions, timings), report.md, recall_at_k.{png,svg},\n" +
			"oracle_best_window.{png,svg}, runs/NAME.trec (the configuration's name made shell-safe; the name is\n" +
			"its TREC tag) and runs/metrics.json, one MTEB result file per\n" +
			"configuration (mteb/results/msrag__MODEL-CONFIG/REVISION/TASK.json, which the mteb package's\n" +
			"ResultCache(cache_path=OUT/mteb).load_results() reads; TASK from --mteb-task or the dataset's\n" +
			"name: scifact is SciFact), and prints the command that checks every metric against pytrec_eval. The files\n" +
			"an earlier eval listed in --out's results.json are removed first; any other file there is left and named. Metrics are MTEB's at 1, 3, 5, 10, 20, 100 and\n" +
			"1000 plus cdr (correct-document recall) at 1, 2, 3, 5, 10; each query ranks --k documents, so\n" +
			"the @1000 metrics need --k 1000 to mean what MTEB's do. The task's MTEB scoring rules apply to\n" +
			"every configuration (ArguAna drops a retrieved document whose id is the query's: docs/eval.md);\n" +
			"--ignore-identical-ids=true|false and --skip-first-result=true|false force them either way.\n\n" +
			"--embedding independent,late evaluates both embeddings (each in OUT/MODE, its index in\n" +
			"OUT/MODE/index, or --index for independent and INDEX-late for late), embeds the queries once\n" +
			"for both, and writes OUT/modes.md and modes.json: every configuration under each embedding,\n" +
			"with the paired difference, its 95% bootstrap interval and the queries won, tied and lost.\n\n" +
			"--model none --tokenizer NAME evaluates an index without a model (msrag index --model none):\n" +
			"windows, rrf, maxp and oracle are over its channels (those that read texts alone), and full, which\n" +
			"needs a model, is not among the default configurations (naming it is refused).\n\n" +
			phaseHelp + " Only the gather writes --out.\n\n" + remoteHelp,
		Flags: append(append([]cli.Flag{
			&cli.StringFlag{Name: "dataset", Required: true, Usage: "dataset directory in BEIR layout (corpus, queries, qrels/<split>.tsv), or mteb:TASK: an MTEB retrieval task's dataset, fetched into the cache on first use (msrag data fetch), evaluated on the task's split with its scoring rules, and, for a hub model MTEB gives prompts of its own, with those"},
			&cli.StringFlag{Name: "split", Value: "test", Usage: "qrels split; several joined by + (train+dev) are judged together (with mteb:TASK: the task's evaluation split)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory"},
			&cli.StringFlag{Name: "index", Usage: "index directory to reuse or build (default OUT/index); an index there gives --model and --windows when they are not given"},
			modelFlag(),
			&cli.StringFlag{Name: "windows", Value: "100,200,500", Usage: "window sizes in content tokens (when not given, sizes above what the model takes are lowered to it: 100,200,254 for all-minilm-l6-v2)"},
			strideFlag(),
			shortTailFlag(),
			&cli.StringFlag{Name: "configs", Value: experiment.DefaultConfigs, Usage: "configurations (see above)"},
			&cli.IntFlag{Name: "k", Value: 100, Usage: "documents ranked per query (1000 for MTEB's @1000 metrics)"},
			&cli.IntFlag{Name: "window-k", Value: 100, Usage: "chunks each window's index returns per query"},
			&cli.IntFlag{Name: "batch", Value: 1024, Usage: "queries embedded and searched at once"},
			&cli.IntFlag{Name: "workers", Usage: "tokenizer goroutines when building (0: all cores)"},
			&cli.BoolFlag{Name: "rebuild", Usage: "build the index even when the one in --index matches"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for another build of the index instead of failing"},
			&cli.StringFlag{Name: "fusion-model", Usage: "fusion.json of msrag tune: adds learned and learned+router (refused for queries it was trained on); " + tune.TransferName + ": adds the built-in fusion model's configuration, " + tune.TransferName + " (a file of that name: ./" + tune.TransferName + ")"},
			&cli.IntFlag{Name: "cv-folds", Usage: "adds learned-cv and learned+router-cv: each fold ranked by a rule fitted on the others (a split without a training split)"},
			&cli.StringFlag{Name: "cv-group", Usage: "regular expression over query ids: queries with the same first submatch share a fold (e.g. '^(.+)-[gs][0-9]+$': one meeting's queries)"},
			&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
			&cli.StringFlag{Name: "mteb-task", Usage: "MTEB task name of the result files and scoring rules, one of the pinned mteb's (a name in another case is respelled; default: from the dataset's directory name, e.g. scifact -> SciFact)"},
			&cli.BoolFlag{Name: "force-mteb-task", Usage: "take --mteb-task when it is another task than the dataset directory's, of other modalities than text, or of no MTEB task (then letters, digits and . _ - only)"},
			&cli.StringFlag{Name: "mteb-revision", Usage: "dataset_revision of the MTEB result files (default: the commit of a fetched dataset, else the dataset's sha256 fingerprint)"},
			&cli.BoolFlag{Name: "ignore-identical-ids", Usage: "=true|false: score with or without MTEB's rule that drops a retrieved document whose id is the query's (default: as the MTEB task does: ArguAna and its translations drop it)"},
			&cli.BoolFlag{Name: "skip-first-result", Usage: "=true|false: score with or without MTEB's rule that drops each query's first result (default: as the MTEB task does)"},
		}, append(append(append(corpusFlags(), channelFlagSet()...), embeddingFlags(true)...), phaseFlags()...)...), append(deviceFlags(), remoteModelFlags()...)...),
		Action: evalAction,
	})
}

// evalSpec maps the flags to an experiment (no embedder yet) and the
// embeddings to evaluate it with.
func evalSpec(c *cli.Context) (experiment.Spec, []msrag.Embedding, error) {
	if c.NArg() != 0 {
		return experiment.Spec{}, nil, usagef("eval: unexpected arguments %v", c.Args().Slice())
	}
	out, err := outFlag(c, "eval")
	if err != nil {
		return experiment.Spec{}, nil, err
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() { // found before the index is built
		return experiment.Spec{}, nil, usagef("eval: --out %s exists and is not a directory: eval writes a directory of results", out)
	}
	if err := indexDefaults(c, "eval"); err != nil {
		return experiment.Spec{}, nil, err
	}
	build, modes, err := buildFlags(c, "eval", true)
	if err != nil {
		return experiment.Spec{}, nil, err
	}
	build.Out = c.String("index")
	spec, err := evalFlags(c, build)
	return spec, modes, err
}

// evalFlags maps every flag but the build's to an experiment of build.
func evalFlags(c *cli.Context, build msrag.Config) (experiment.Spec, error) {
	configText := c.String("configs")
	if noModel(c) && !c.IsSet("configs") {
		configText = experiment.NoModelConfigs
	}
	copts, err := corpusOptions(c, "eval")
	if err != nil {
		return experiment.Spec{}, err
	}
	spec := experiment.Spec{Build: build,
		Dataset: c.String("dataset"), Split: c.String("split"), Out: c.String("out"),
		K: c.Int("k"), ChannelK: c.Int("window-k"), Batch: c.Int("batch"), Rebuild: c.Bool("rebuild"), Corpus: copts,
		MTEB: experiment.MTEBOptions{Task: c.String("mteb-task"), ForceTask: c.Bool("force-mteb-task"), Revision: c.String("mteb-revision"),
			IgnoreIdenticalIDs: boolIfSet(c, "ignore-identical-ids"), SkipFirstResult: boolIfSet(c, "skip-first-result")},
	}
	if err := checkMTEBTask(c, &spec.MTEB, spec.Dataset); err != nil {
		return spec, err
	}
	if spec.Configs, err = experiment.ParseConfigs(configText, spec.Layout()); errors.Is(err, fusion.ErrUnknownRule) {
		return experiment.Spec{}, usagef("eval: --configs: %w; the evaluation index's channels, each a configuration alone: %s", err, spec.Layout())
	} else if err != nil {
		return experiment.Spec{}, usagef("eval: --configs: %w", err)
	}
	if !c.IsSet("configs") {
		spec.Configs = nil // the defaults: those an index without the full window cannot serve are left out
	}
	if err := atLeastOne(c, "eval", "k", "window-k", "batch"); err != nil {
		return spec, err
	}
	if task, ok := strings.CutPrefix(spec.Dataset, "mteb:"); ok {
		if _, err := hub.ParseTask(task); err != nil {
			return spec, usageError{fmt.Errorf("eval: --dataset: %w", err)}
		}
	}
	if _, err := embedderOptions(c); err != nil {
		return spec, err
	}
	if err := evalPhase(c, &spec); err != nil {
		return spec, err
	}
	if p, _ := phaseFlag(c, "eval"); !noModel(c) && (p.phase == phaseNone || p.phase == phaseScatter) {
		if spec.GPUs, err = faissGPUs(c); err != nil { // the phases that search FAISS
			return spec, err
		}
	}
	return spec, learnedFlags(c, &spec)
}

// checkMTEBTask checks --mteb-task (experiment.CheckTask) before any work
// and puts it into o in mteb's spelling, saying so when it respelled it;
// the dataset's own task is its folder's, or mteb:TASK's.
func checkMTEBTask(c *cli.Context, o *experiment.MTEBOptions, dataset string) error {
	if c.Bool("force-mteb-task") && o.Task == "" {
		return usagef("eval: --force-mteb-task forces the task --mteb-task names, and none is given")
	}
	if o.Task == "" {
		return nil // the dataset's own, checked with it (experiment.Spec)
	}
	if name, ok := strings.CutPrefix(dataset, "mteb:"); ok {
		if ref, err := hub.ParseTask(name); err == nil {
			dataset = ref.Task.Name // what experiment.TaskName knows it by
		}
	}
	task, respelled, err := experiment.CheckTask(o.Task, dataset, o.ForceTask)
	if errors.Is(err, experiment.ErrTask) {
		return usagef("eval: --mteb-task: %w (--force-mteb-task takes it all the same)", err)
	}
	if err != nil {
		return usagef("eval: --mteb-task: %w", err)
	}
	if respelled && !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "eval: --mteb-task %s is %s in mteb's spelling: its result files and scoring rules are %s's\n", o.Task, task, task)
	}
	o.Task = task
	return nil
}

// boolIfSet is the value of the boolean flag name when it was given, nil
// when not.
func boolIfSet(c *cli.Context, name string) *bool {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Bool(name)
	return &v
}

// evalPhase reads --phase, --work and --shard into spec.
func evalPhase(c *cli.Context, spec *experiment.Spec) error {
	t, err := phaseFlag(c, "eval")
	if err != nil || t.phase == phaseNone {
		return err
	}
	if !c.IsSet("index") {
		return usagef("eval: --phase searches the shards of --index, built beforehand: give --index")
	}
	if c.String("embedding") != "independent" || c.Bool("rebuild") {
		return usagef("eval: --phase evaluates the index of --index as it is: no --embedding late, no --rebuild")
	}
	if err := t.checkShardCount(c, "eval", shardDirs(spec.Build.Out)); err != nil {
		return err
	}
	embeds := !noModel(c) && embed.Devices(embed.Origin{}, c.String("model")) &&
		slices.ContainsFunc(spec.Layout().Kinds(), func(k msrag.ChannelKind) bool { return k.Needs().Has(channel.QueryVectors) })
	if err := phaseDevice(c, "eval", t, embeds); err != nil {
		return err
	}
	spec.Work, spec.Shard = t.work, t.shard
	return nil
}

// learnedFlags reads --fusion-model, --cv-folds and --cv-group.
func learnedFlags(c *cli.Context, spec *experiment.Spec) error {
	builtin, err := builtinFusion(c, "eval", "fusion-model")
	if err != nil {
		return err
	}
	if p := c.String("fusion-model"); builtin != "" {
		spec.Builtin = builtin
	} else if p != "" {
		m, err := tune.ReadFusionModel(p)
		if err != nil {
			return usageError{err}
		}
		if noModel(c) && m.Router != nil {
			return usagef("eval: --fusion-model %s has a router, which weighs the windows from the query's embedding, and --model none embeds nothing", p)
		}
		spec.FusionModel = m
	}
	spec.CVFolds = c.Int("cv-folds")
	if spec.CVFolds == 1 || spec.CVFolds < 0 {
		return usagef("eval: --cv-folds %d: want 0 (none) or at least 2", spec.CVFolds)
	}
	if c.IsSet("cv-group") && spec.CVFolds == 0 {
		return usagef("eval: --cv-group groups the queries of cross-validation, which --cv-folds asks for: without it the groups would do nothing")
	}
	if g := c.String("cv-group"); g != "" {
		re, err := regexp.Compile(g)
		if err != nil {
			return usagef("eval: --cv-group: %w", err)
		}
		spec.CVGroup = re
	}
	return nil
}

func evalAction(c *cli.Context) error {
	spec, modes, err := evalSpec(c)
	if err != nil {
		return err
	}
	prompts, err := evalTask(c, &spec)
	if err != nil {
		return err
	}
	if spec.Build.Tokenizer == nil {
		eo, err := modelOptions(c, "eval", true)
		if err != nil {
			return err
		}
		if prompts != nil {
			eo.Extra = append([]any{onnx.Options{FP16: c.Bool("fp16"), Prompts: prompts}}, eo.Extra...)
		}
		if spec.Build.Embedder, err = openEmbedder(c, c.String("model"), eo); err != nil {
			return err
		}
		defer spec.Build.Embedder.Close()
		if spec.Build.Windows = fitDefaultWindows(c, "eval", spec.Build.Windows, spec.Build.Embedder.Spec()); c.IsSet("configs") {
			if spec.Configs, err = experiment.ParseConfigs(c.String("configs"), spec.Layout()); err != nil {
				return usagef("eval: --configs: %w", err)
			}
		}
		if err := checkModelChannels("eval", spec.Build.Channels, spec.Build.Embedder.Spec().Dims); err != nil {
			return err
		}
	}
	var bar *progressBar
	if !c.Bool("quiet") {
		spec.Log = c.App.ErrWriter
		bar = newProgressBar(c.App.ErrWriter, "index")
		spec.Build.Progress = bar.callback()
	}
	if len(modes) > 1 {
		res, err := experiment.RunModes(c.Context, spec, modes)
		bar.finish()
		if err != nil {
			return asUsage(err)
		}
		return printModes(c.App.Writer, c.App.ErrWriter, res)
	}
	run := experiment.Run
	switch p, _ := phaseFlag(c, "eval"); p.phase {
	case phaseStats:
		return asUsage(experiment.Statistics(c.Context, spec)) // it writes into --work
	case phaseScatter:
		return asUsage(experiment.Scatter(c.Context, spec))
	case phaseGather:
		run = experiment.Gather
	}
	res, err := run(c.Context, spec)
	bar.finish()
	if err != nil {
		return asUsage(err)
	}
	printRemoteStats(c.App.ErrWriter, "eval", spec.Build.Embedder)
	return printEval(c.App.Writer, c.App.ErrWriter, res)
}

// evalTask fetches the dataset of --dataset mteb:TASK (unless present, or
// refused with --offline) and points spec at it; for a hub model, it
// returns the prompts the pinned mteb gives the model for the task, if it
// gives some, and says on standard error which prompts apply.
func evalTask(c *cli.Context, spec *experiment.Spec) (*onnx.Prompts, error) {
	name, ok := strings.CutPrefix(spec.Dataset, "mteb:")
	if !ok {
		return nil, nil
	}
	ref, err := hub.ParseTask(name)
	if err != nil {
		return nil, usageError{err}
	}
	opts := hub.DatasetOptions{Offline: c.Bool("offline") || onnx.OfflineEnv()}
	if !c.Bool("quiet") {
		opts.Log = c.App.ErrWriter
	}
	dir, err := hub.FetchDataset(c.Context, spec.Dataset, opts)
	if err != nil {
		return nil, err
	}
	if !c.IsSet("split") {
		spec.Split = ""
	}
	if err := spec.ForTask(dir, *ref.Task); err != nil {
		return nil, usageError{err}
	}
	model, ok := strings.CutPrefix(c.String("model"), "hf:")
	if !ok {
		return nil, nil
	}
	model, _, _ = strings.Cut(model, "@")
	q, d, source, ok := experiment.MTEBPrompts(model, *ref.Task)
	fmt.Fprintf(noteWriter(c), "eval: prompts: %s\n", source)
	if !ok {
		return nil, nil
	}
	return &onnx.Prompts{Query: q, Passage: d, Source: source}, nil
}

// printModes prints the comparison of the embeddings and what was written.
func printModes(stdout, stderr io.Writer, res *experiment.ModesResult) error {
	if err := report.WriteModesMarkdown(stdout, res.Modes); err != nil {
		return err
	}
	for _, r := range res.Runs {
		fmt.Fprintf(stderr, "eval: %s embedding: wrote %s and %s\n", r.Report.Embedding, r.Files.Results, r.Files.Report)
	}
	fmt.Fprintf(stderr, "eval: wrote %s and %s\n", res.Markdown, res.JSON)
	return nil
}

// printEval prints the summary tables, what was written and the check command.
func printEval(stdout, stderr io.Writer, res *experiment.Result) error {
	if err := report.WriteSummary(stdout, res.Report); err != nil {
		return err
	}
	f := res.Files
	fmt.Fprintf(stderr, "eval: wrote %s, %s, %s and %d run files in %s (%.1f s)\n",
		f.Results, f.Report, strings.Join(f.Plots, ", "), len(f.Runs), filepath.Dir(f.Metrics), res.Report.Timings.Total)
	if len(f.MTEB) > 0 {
		fmt.Fprintf(stderr, "eval: wrote %d MTEB result files under %s (scripts/check_mteb_results.py loads them with mteb)\n",
			len(f.MTEB), filepath.Join(filepath.Dir(f.Results), "mteb"))
	}
	fmt.Fprintf(stdout, "Check every metric against pytrec_eval (python3 with pytrec_eval: the header of %s says how to make one):\n\n  %s\n", f.Checker, f.CheckCommand())
	return nil
}
