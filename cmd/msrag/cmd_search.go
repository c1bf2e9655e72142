package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/output"
	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/tune"
)

func init() {
	register(&cli.Command{
		Name:  "search",
		Usage: "search an index with a batch of queries and fuse the windows' rankings",
		Description: "Embeds each batch of queries once, searches every window's index for its top --window-k\n" +
			"chunks, maps chunks to documents and fuses them with --fusion:\n\n" + fusionHelp + kindsFusionHelp() + "\n\n" +
			"--index takes one index directory, several separated by commas (shards of one corpus), or a\n" +
			"directory whose subdirectories are shards; shards are searched together and each window's\n" +
			"lists merged by score before fusion, as one index over the whole corpus would rank.\n\n" +
			"Formats: trec (qid Q0 docid rank score tag), jsonl (one line per query:\n" +
			"{\"query_id\", \"hits\": [{\"doc_id\", \"rank\", \"score\", \"evidence\": [{\"channel\", \"window\", \"full\",\n" +
			"\"chunk_rank\", \"chunk_score\", \"start\", \"end\", \"terms\", \"text\"}]}]}, ranks from 1, byte spans into the\n" +
			"document's title + \" \" + text; terms: the query terms a lexical chunk holds; text: the chunk's text,\n" +
			"with --text), parquet (query_id, doc_id, rank, score, evidence as JSON).\n\n" +
			"An index built with --model none is searched without a model: the queries are only analysed,\n" +
			"the default rule fuses its channels (rrf:windows=KIND there) and a rule naming a channel that\n" +
			"searches by vector is refused.\n\n" +
			phaseHelp + "\n\n" +
			"An index built with a model behind a server is searched through a server of the same model:\n" +
			"the one the index recorded, or those of --endpoints; the API key, if any, comes from $" + remote.APIKeyEnv + ".",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "index", Required: true, Usage: "index directory, DIR1,DIR2,... of shards, or a directory of shard directories"},
			&cli.StringFlag{Name: "queries", Required: true, Usage: "queries: JSONL ({\"_id\", \"text\"}), TSV (id<TAB>text), Parquet, plain lines, or a dataset directory"},
			&cli.StringFlag{Name: "split", Usage: "with --queries a dataset directory: only the queries its qrels split judges (test, dev, train+dev), as msrag eval searches"},
			&cli.IntFlag{Name: "k", Value: 10, Usage: "documents per query"},
			&cli.IntFlag{Name: "window-k", Value: 100, Usage: "chunks each window's index returns"},
			&cli.StringFlag{Name: "fusion", Usage: "fusion rule (see above; default: the index's, " + fusion.DefaultHybrid + " for an index of several kinds of channel, rrf for one of one kind), or " + tune.TransferName + " (the built-in fusion model, learned on other datasets: docs/fusion.md)"},
			&cli.StringFlag{Name: "fusion-model", Usage: "fusion.json of msrag tune: its learned rule (with its router: --fusion learned+router); replaces --fusion; " + tune.TransferName + ": the built-in fusion model, as --fusion " + tune.TransferName + " (a file of that name: ./" + tune.TransferName + ")"},
			&cli.StringFlag{Name: "format", Value: "trec", Usage: "trec, jsonl or parquet"},
			&cli.StringFlag{Name: "out", Usage: "output file (default standard output; a file is written whole, then renamed into place; a link is followed; a device, FIFO or socket is written as it is)"},
			&cli.StringFlag{Name: "tag", Value: "msrag", Usage: "run tag in the trec format"},
			&cli.BoolFlag{Name: "text", Usage: "jsonl and parquet: each chunk's text in its evidence (\"text\"), read from --corpus"},
			&cli.StringFlag{Name: "corpus", Usage: "with --text: the corpus the index was built from (default: the one file the index records having read)"},
			&cli.IntFlag{Name: "batch", Value: 1024, Usage: "queries embedded and searched at once"},
			&cli.BoolFlag{Name: "skip-verify", Usage: "do not check the index files' sha256 when opening"},
			quietFlag(),
		}, append(append(phaseFlags(), deviceFlags()...), remoteClientFlags()...)...),
		Action: searchAction,
	})
}

// fusionHelp describes the fusion rules (fusion.Parse).
var fusionHelp = "  rrf                  RRF over the group of the index's first kind (its sliding windows): every chunk adds\n" +
	"                       1/(rank + c), ranks from 0, c = 1\n" +
	"  rrf:windows=all      RRF over the channels of every kind\n" +
	"  " + fusion.DefaultHybrid + "   the same, each channel weighing what weights= gives it or its\n" +
	"                       kind, and each kind weighed per query by its best document's RRF score (the default with several)\n" +
	"  combsum:norm=zscore,windows=all   z-scored scores summed over every kind\n" +
	"  combsum:norm=zscore,windows=all,adapt=consensus:1   the same, each channel weighed by its agreement with\n" +
	"                       the batch's consensus: better when one kind fails, but a query's ranking depends on\n" +
	"                       the other queries of its --batch\n" +
	"  rrf:windows=KIND     RRF over the group of one kind (below)\n" +
	"  rrf:c=60,base=1      classic RRF; cap=3 counts at most 3 chunks of a document per window\n" +
	"  docrrf               RRF over per-window document lists (each document at its best chunk)\n" +
	"  combsum:norm=minmax  sum of per-window document scores, normalised (none, minmax, zscore)\n" +
	"  combmnz:norm=zscore  CombSUM times the number of windows that found the document\n" +
	"  maxp                 best chunk score over the windows\n" +
	"  w100 (w=100), full   one window alone; full: documents embedded whole (an index built with --full)\n" +
	"  CHANNEL              one channel of any kind alone (below)\n" +
	"  any rule takes windows=100+200 (a subset), windows=KIND|all, weights=100:1/200:0.5\n" +
	"  and balance=kinds (each kind of channel the same total weight; not maxp)\n" +
	"  " + tune.TransferName + "             the built-in fusion model msrag tune fitted on the training splits of\n" +
	"                       several datasets (docs/fusion.md): no labels needed; for indices of its windows\n"

// searchFlags checks what can be checked before the index is opened.
func searchFlags(c *cli.Context) (msrag.SearchOptions, output.RunFormat, error) {
	if c.NArg() != 0 {
		return msrag.SearchOptions{}, 0, usagef("search: unexpected arguments %v", c.Args().Slice())
	}
	opts := msrag.SearchOptions{K: c.Int("k"), ChannelK: c.Int("window-k")}
	if err := atLeastOne(c, "search", "k", "window-k", "batch"); err != nil {
		return opts, 0, err
	}
	builtin, err := searchBuiltin(c)
	if err != nil {
		return opts, 0, err
	}
	switch fu := c.String("fusion"); {
	case c.String("fusion-model") != "":
		if c.IsSet("fusion") && fu != "learned" && fu != "learned+router" {
			return opts, 0, usagef("search: with --fusion-model, --fusion is learned or learned+router, not %q", fu)
		}
	case builtin != "": // chosen for the index once it is open (modelFusion)
	case c.IsSet("fusion"):
		f, err := fusion.Parse(fu)
		if errors.Is(err, fusion.ErrUnknownRule) {
			return opts, 0, usagef("search: --fusion: %w%s", err, indexChannels(c.String("index")))
		}
		if err != nil {
			return opts, 0, usagef("search: --fusion: %w", err)
		}
		opts.Fusion = f
	}
	format, err := output.ParseRunFormat(c.String("format"))
	if err != nil {
		return opts, 0, usagef("search: --format: %w", err)
	}
	if _, err := outFileFlag(c, "search"); err != nil {
		return opts, 0, err
	}
	if st, err := os.Stat(c.String("queries")); c.IsSet("split") && (err != nil || !st.IsDir()) {
		return opts, 0, usagef("search: --split %s picks the judged queries of a dataset directory, and --queries %s is not one", c.String("split"), c.String("queries"))
	}
	if c.Bool("text") && format == output.TREC {
		return opts, 0, usagef("search: --text puts chunk texts in the evidence, which --format trec has not: use jsonl or parquet")
	}
	if c.IsSet("corpus") && !c.Bool("text") {
		return opts, 0, usagef("search: --corpus is where --text reads chunk texts: without --text it would do nothing")
	}
	if err := corpus.CheckID(c.String("tag")); format == output.TREC && err != nil {
		return opts, 0, usagef("search: --tag: %w", err)
	}
	if _, err := embedderOptions(c); err != nil {
		return opts, 0, err
	}
	return opts, format, nil
}

func searchAction(c *cli.Context) error {
	opts, format, err := searchFlags(c)
	if err != nil {
		return err
	}
	task, err := phaseFlag(c, "search")
	if err != nil {
		return err
	}
	if task.phase != phaseNone {
		if c.Bool("text") {
			return usagef("search: --text is for a search of the whole index, not of --phase")
		}
		return searchPhase(c, task, opts, format)
	}
	ix, err := openIndex(c, c.String("index"))
	if err != nil {
		return err
	}
	defer ix.Close()
	if !c.IsSet("fusion") && c.String("fusion-model") == "" {
		opts.Fusion = fusion.Default(ix.Layout())
	}
	if opts.Fusion, err = modelFusion(c, ix, opts.Fusion); err != nil {
		return err
	}
	if err := ix.CheckFusion(opts.Fusion); err != nil {
		return usageError{fmt.Errorf("search: --fusion: %w", err)}
	}
	opts = clampSearch(c, ix, opts)
	opts.SkipTerms = format == output.TREC // the TREC format shows no evidence
	queries, qpath, err := searchQueries(c)
	if err != nil {
		return err
	}
	texts, err := textsCorpus(c, ix)
	if err != nil {
		return err
	}
	return writeOutput(c, c.String("out"), func(w io.Writer) error {
		return searchAll(c, ix, queries, qpath, opts, texts, output.NewRunWriter(w, format, c.String("tag")))
	})
}

// textsCorpus is the corpus --text reads: --corpus, or the one file the
// index's manifest records; "" without --text.
func textsCorpus(c *cli.Context, ix *msrag.Index) (string, error) {
	if !c.Bool("text") || c.IsSet("corpus") {
		return c.String("corpus"), nil
	}
	in := ix.Manifest().Inputs
	if len(in) != 1 {
		return "", usagef("search: --text: the index records %d corpus files, not one: name the corpus with --corpus", len(in))
	}
	return in[0].Path, nil
}

// modelFusion returns the rule of --fusion-model (checked against the
// index), or of the built-in fusion --fusion-model or --fusion names
// (tune.Builtin) that serves the index: the rule its fit chose unless
// --fusion says learned or learned+router; or f when there is neither.
func modelFusion(c *cli.Context, ix msrag.Searcher, f fusion.Fusion) (fusion.Fusion, error) {
	p := c.String("fusion-model")
	builtin, err := searchBuiltin(c)
	if err != nil {
		return f, err
	}
	var m *tune.FusionModel
	switch {
	case builtin != "":
		if m, err = tune.Builtin(builtin, ix); err != nil {
			return f, usageError{fmt.Errorf("search: built-in fusion %s: %w", builtin, err)}
		}
		if p == "" || !c.IsSet("fusion") {
			f, _, err = m.Chosen()
			return f, err
		}
		p = builtin
	case p == "":
		return f, nil
	default:
		if m, err = tune.ReadFusionModel(p); err != nil {
			return f, usageError{err}
		}
	}
	if err := tune.CheckFusionModel(ix, m); err != nil {
		return f, usageError{fmt.Errorf("search: --fusion-model %s: %w", p, err)}
	}
	f, err = m.Fusion(c.String("fusion") == "learned+router")
	if err != nil {
		return f, usageError{fmt.Errorf("search: --fusion-model %s: %w", p, err)}
	}
	return f, nil
}

// searchAll searches the queries batch by batch and writes the hits; with
// texts (a corpus), it holds every query's hits, reads the texts of the
// documents they rank from it and then writes them with their chunks'
// texts.
func searchAll(c *cli.Context, ix *msrag.Index, queries []corpus.Query, qpath string, opts msrag.SearchOptions, texts string, rw *output.RunWriter) error {
	var held [][]msrag.Hit
	write := func(i int, h []msrag.Hit) error { return rw.Write(queries[i].ID, h) }
	if texts != "" {
		write = func(_ int, h []msrag.Hit) error { held = append(held, h); return nil }
	}
	qtexts := make([]string, len(queries))
	for i, q := range queries {
		qtexts[i] = q.Text
	}
	_, err := ix.SearchBatches(c.Context, qtexts, msrag.BatchOptions{Batch: c.Int("batch"), ChannelK: opts.ChannelK}, func(lo int, ch *msrag.ChunkHits) error {
		hits, err := ix.Fuse(ch, opts)
		if err != nil {
			return err
		}
		for i, h := range hits {
			if err := write(lo+i, h); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("search: %s: %w", qpath, err)
	}
	if texts != "" {
		ids := map[string]bool{}
		for _, hits := range held {
			for _, h := range hits {
				ids[h.DocID] = true
			}
		}
		if rw.Texts, err = corpus.ReadTexts(c.Context, texts, corpus.Options{}, ids); err != nil {
			return fmt.Errorf("search: --text: %w", err)
		}
		for i, h := range held {
			if err := rw.Write(queries[i].ID, h); err != nil {
				return err
			}
		}
	}
	return rw.Close()
}

// indexChannels names the channels of the index in dir (one index, shards
// separated by commas, or a directory of shards), for an error about a
// rule it does not have; "" when it cannot be read.
func indexChannels(dir string) string {
	dirs := shardDirs(strings.Split(dir, ",")[0])
	man, err := msrag.ReadManifest(dirs[0])
	if err != nil {
		return ""
	}
	id, err := msrag.IdentityOf(man)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("; the index's channels, each a rule alone: %s", id.Layout)
}

// searchQueries reads --queries, and with --split only the queries that
// split of the dataset judges; it returns them and where they were read.
func searchQueries(c *cli.Context) ([]corpus.Query, string, error) {
	if c.IsSet("split") {
		ds, err := corpus.OpenDataset(c.String("queries"))
		if err != nil {
			return nil, "", err
		}
		_, queries, err := ds.JudgedQueries(c.String("split"))
		return queries, ds.Queries, err
	}
	qpath, err := queriesPath(c.String("queries"))
	if err != nil {
		return nil, "", err
	}
	queries, err := corpus.ReadQueries(qpath, corpus.Options{})
	return queries, qpath, err
}

// outFlag returns --out, refusing an explicit empty value, which would
// otherwise write nothing and succeed.
func outFlag(c *cli.Context, cmd string) (string, error) {
	if c.IsSet("out") && strings.TrimSpace(c.String("out")) == "" {
		return "", usagef("%s: --out is empty: name the output", cmd)
	}
	return c.String("out"), nil
}

// outFileFlag returns --out of a command that writes one file, checked
// before any work (safefile.CheckOutput): not a directory, in a directory
// that is there.
func outFileFlag(c *cli.Context, cmd string) (string, error) {
	out, err := outFlag(c, cmd)
	if err != nil || out == "" {
		return out, err
	}
	if err := safefile.CheckOutput(out); err != nil {
		return "", usagef("%s: --out: %w", cmd, err)
	}
	return out, nil
}

// clampSearch clamps --k to the index's documents and --window-k to the most
// chunks a window holds, saying so once, so that memory follows the index.
func clampSearch(c *cli.Context, ix *msrag.Index, opts msrag.SearchOptions) msrag.SearchOptions {
	cl := ix.Clamp(opts)
	if cl.K < opts.K && c.IsSet("k") {
		fmt.Fprintf(c.App.ErrWriter, "search: --k %d is more than the index's %d documents: returning at most %d\n", opts.K, ix.NumDocs(), cl.K)
	}
	if cl.ChannelK < opts.ChannelK && c.IsSet("window-k") {
		fmt.Fprintf(c.App.ErrWriter, "search: --window-k %d is more than any window's %d chunks: searching for %d\n", opts.ChannelK, cl.ChannelK, cl.ChannelK)
	}
	return cl
}

// writeOutput writes what fn writes to the output path a user named
// (safefile.WriteOutput: a regular file replaced atomically, nothing left
// when fn fails; a device, FIFO or socket written as it is; a link followed),
// or to stdout when path is empty.
func writeOutput(c *cli.Context, path string, fn func(io.Writer) error) error {
	if path == "" {
		bw := bufio.NewWriterSize(c.App.Writer, 1<<16)
		if err := fn(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	_, err := safefile.WriteOutput(c.Context, path, fn)
	return err
}
