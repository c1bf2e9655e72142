package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/output"
	"github.com/msrag/msrag/scatter"
)

// phase is one phase of a scatter-gather search (scatter.Statistics,
// scatter.Scatter, scatter.OpenGather).
type phase int

const (
	phaseNone phase = iota
	phaseStats
	phaseScatter
	phaseGather
)

var phaseNames = map[string]phase{"stats": phaseStats, "scatter": phaseScatter, "gather": phaseGather}

// phaseHelp describes the phases (search and eval).
const phaseHelp = "Scatter-gather: over a directory of shards (msrag index --shard i/n), --phase runs one phase of\n" +
	"the search as its own process, the phases sharing --work: stats (with --shard i/n: shard i's\n" +
	"corpus statistics for the queries, and the i-th block of the queries embedded), scatter (with\n" +
	"--shard i/n: shard i alone searched with every shard's statistics, its lists written), gather\n" +
	"(every shard's lists merged exactly, fused, written as without --phase). Give every phase the\n" +
	"same command line; scripts/slurm/submit-search.sh submits them as dependent Slurm jobs."

// phaseFlags are the flags of scatter-gather phases.
func phaseFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "phase", Usage: "stats, scatter or gather: one phase of a scatter-gather search over the shards of --index (see above)"},
		&cli.StringFlag{Name: "work", Usage: "with --phase: the directory the phases share"},
		&cli.StringFlag{Name: "shard", Usage: "with --phase stats or scatter: i/n, the task's shard i of the n shards of --index"},
	}
}

// phaseTask is what --phase, --work and --shard ask for.
type phaseTask struct {
	phase phase
	work  string
	shard int
}

// phaseFlag reads --phase and its companions, refusing one without the
// others before any work.
func phaseFlag(c *cli.Context, cmd string) (phaseTask, error) {
	var t phaseTask
	name := c.String("phase")
	if name == "" {
		for _, f := range []string{"work", "shard"} {
			if c.IsSet(f) {
				return t, usagef("%s: --%s is for a scatter-gather phase (--phase)", cmd, f)
			}
		}
		return t, nil
	}
	p, ok := phaseNames[name]
	if !ok {
		return t, usagef("%s: --phase %q: want stats, scatter or gather", cmd, name)
	}
	t.phase, t.work = p, strings.TrimSpace(c.String("work"))
	if t.work == "" {
		return t, usagef("%s: --phase %s needs --work, the directory the phases share", cmd, name)
	}
	switch {
	case p == phaseGather && c.IsSet("shard"):
		return t, usagef("%s: --phase gather reads every shard's lists: no --shard", cmd)
	case p != phaseGather && !c.IsSet("shard"):
		return t, usagef("%s: --phase %s needs --shard i/n, the task's shard", cmd, name)
	case p != phaseGather:
		sh, err := parseShard(c.String("shard"))
		if err != nil {
			return t, err
		}
		t.shard = sh.I
		if sh.N < 1 {
			return t, usagef("%s: --shard %q: want i/n", cmd, c.String("shard"))
		}
	}
	return t, nil
}

// checkShardCount fails unless --shard's n is the number of shards.
func (t phaseTask) checkShardCount(c *cli.Context, cmd string, dirs []string) error {
	if t.phase == phaseGather {
		return nil
	}
	sh, _ := parseShard(c.String("shard"))
	if sh.N != len(dirs) {
		return usagef("%s: --shard %s, and --index has %d shards", cmd, c.String("shard"), len(dirs))
	}
	return nil
}

// searchPhase runs one phase of a scatter-gather search.
func searchPhase(c *cli.Context, t phaseTask, opts msrag.SearchOptions, format output.RunFormat) error {
	dirs, err := indexDirs(c.String("index"))
	if err != nil {
		return err
	}
	if err := t.checkShardCount(c, "search", dirs); err != nil {
		return err
	}
	man, err := msrag.ReadManifest(dirs[0])
	if err != nil {
		return err
	}
	id, err := msrag.IdentityOf(man)
	if err != nil {
		return fmt.Errorf("search: index %s: %w", dirs[0], err)
	}
	kinds, err := phaseKinds(c, id.Layout, opts.Fusion)
	if err != nil {
		return err
	}
	eo, err := searchModelOptions(c, dirs[0], man.Model)
	if err != nil {
		return err
	}
	searched := kinds
	if searched == nil {
		searched = id.Layout.Kinds()
	}
	embeds := !man.Model.None() && msrag.EmbedderDevices(man.Model) && slices.ContainsFunc(searched, func(k msrag.ChannelKind) bool { return k.Needs().Has(channel.QueryVectors) })
	if err := phaseDevice(c, "search", t, embeds); err != nil {
		return err
	}
	queries, _, err := searchQueries(c)
	if err != nil {
		return err
	}
	so, err := scatterOptions(c, t, opts, kinds, eo, format == output.JSONL)
	if err != nil {
		return err
	}
	qs := scatter.QuerySetOf(queries)
	switch t.phase {
	case phaseStats:
		return scatter.Statistics(c.Context, dirs, t.shard, qs, so)
	case phaseScatter:
		return scatter.Scatter(c.Context, dirs, t.shard, qs, so)
	}
	return gatherSearch(c, dirs, qs, so, opts, format)
}

// phaseDevice refuses, before any work, device flags that a phase would
// leave unused: the gather embeds no query and searches no FAISS index (it
// merges and fuses the lists the scatter tasks wrote), and the statistics
// task uses a device only to embed the queries, when the search reads
// their vectors (embeds) and the index's model runs on a device. The
// scatter task searches the FAISS indices on the GPUs.
func phaseDevice(c *cli.Context, cmd string, t phaseTask, embeds bool) error {
	eo, err := embedderOptions(c)
	if err != nil {
		return err
	}
	field, value := eo.ChoosesDevice()
	switch {
	case field == "":
		return nil
	case t.phase == phaseGather:
		return usagef("%s: %s %s with --phase gather: the gather merges and fuses the lists the scatter tasks wrote, "+
			"embedding no query and searching no FAISS index: the option would do nothing (give it to the stats and scatter tasks)",
			cmd, deviceFlagNames[field], value)
	case t.phase == phaseStats && !embeds:
		return usagef("%s: %s %s with --phase stats: the statistics task would embed no query on it (the search reads no query vectors, "+
			"or the index's model runs on no device) and searches no FAISS index: the option would do nothing (give it to the scatter tasks)",
			cmd, deviceFlagNames[field], value)
	}
	return nil
}

// phaseKinds returns the kinds of channel the search reads: those --fusion
// (or the index's default) fuses; every kind with a fusion model or a
// built-in one, whose rule is read in the gather.
func phaseKinds(c *cli.Context, layout msrag.Layout, f fusion.Fusion) ([]msrag.ChannelKind, error) {
	if builtin, err := searchBuiltin(c); err != nil || builtin != "" || c.String("fusion-model") != "" {
		return nil, err
	}
	if !c.IsSet("fusion") {
		f = fusion.Default(layout)
	}
	kinds, err := f.Kinds(layout)
	if err != nil {
		return nil, usageError{fmt.Errorf("search: --fusion: %w", err)}
	}
	return kinds, nil
}

// scatterOptions maps the flags every phase shares; eo are the model's
// options (searchModelOptions).
func scatterOptions(c *cli.Context, t phaseTask, opts msrag.SearchOptions, kinds []msrag.ChannelKind, eo embed.Options, terms bool) (scatter.Options, error) {
	var err error
	so := scatter.Options{Work: t.work, ChannelK: opts.ChannelK, Batch: c.Int("batch"), Kinds: kinds, Terms: terms,
		Open: msrag.OpenOptions{SkipVerify: c.Bool("skip-verify"), EmbedderOptions: eo}}
	if t.phase == phaseScatter {
		if so.Open.GPUs, err = faissGPUs(c); err != nil {
			return so, err
		}
	}
	return so, nil
}

// gatherSearch gathers every shard's lists, fuses them and writes the run.
func gatherSearch(c *cli.Context, dirs []string, qs scatter.QuerySet, so scatter.Options, opts msrag.SearchOptions, format output.RunFormat) error {
	g, err := scatter.OpenGather(dirs, qs, so)
	if err != nil {
		return err
	}
	defer g.Close()
	if !c.IsSet("fusion") && c.String("fusion-model") == "" {
		opts.Fusion = fusion.Default(g.Layout())
	}
	if opts.Fusion, err = modelFusion(c, g, opts.Fusion); err != nil {
		return err
	}
	if err := g.CheckFusion(opts.Fusion); err != nil {
		return usageError{fmt.Errorf("search: --fusion: %w", err)}
	}
	opts.SkipTerms = !so.Terms
	return writeOutput(c, c.String("out"), func(w io.Writer) error {
		rw := output.NewRunWriter(w, format, c.String("tag"))
		_, err := g.SearchBatches(c.Context, qs.Texts, msrag.BatchOptions{ChannelK: so.ChannelK}, func(lo int, ch *msrag.ChunkHits) error {
			hits, err := g.Fuse(ch, opts)
			if err != nil {
				return err
			}
			for i, h := range hits {
				if err := rw.Write(qs.IDs[lo+i], h); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("search: gather of %s: %w", so.Work, err)
		}
		return rw.Close()
	})
}
