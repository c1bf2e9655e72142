package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
)

func init() {
	register(&cli.Command{
		Name:  "search",
		Usage: "search an index with a batch of queries and fuse the windows' rankings",
		Description: "Embeds each batch of queries once, searches every window's index for its top --window-k\n" +
			"chunks, maps chunks to documents and fuses: rrf (each chunk adds 1/(rank + c), ranks from\n" +
			"--rank-base), maxp (best chunk score over the windows) or w=SIZE (one window alone).\n\n" +
			"--index takes one index directory, several separated by commas (shards of one corpus), or a\n" +
			"directory whose subdirectories are shards; shards are searched together and each window's\n" +
			"lists merged by score before fusion, as one index over the whole corpus would rank.\n\n" +
			"Formats: trec (qid Q0 docid rank score tag), jsonl (one line per query:\n" +
			"{\"query_id\", \"hits\": [{\"doc_id\", \"rank\", \"score\", \"evidence\": [{\"window\", \"chunk_rank\",\n" +
			"\"chunk_score\", \"start\", \"end\"}]}]}, ranks from 1, byte spans into the document's title + \" \" +\n" +
			"text), parquet (query_id, doc_id, rank, score, evidence as JSON).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "index", Required: true, Usage: "index directory, DIR1,DIR2,... of shards, or a directory of shard directories"},
			&cli.StringFlag{Name: "queries", Required: true, Usage: "queries: JSONL ({\"_id\", \"text\"}), TSV (id<TAB>text), Parquet, plain lines, or a dataset directory"},
			&cli.IntFlag{Name: "k", Value: 10, Usage: "documents per query"},
			&cli.IntFlag{Name: "window-k", Value: 100, Usage: "chunks each window's index returns"},
			&cli.StringFlag{Name: "fusion", Value: "rrf", Usage: "rrf, maxp, w=SIZE, or full (an index built with --full)"},
			&cli.StringFlag{Name: "windows", Usage: "window sizes fused by rrf or maxp (default: all)"},
			&cli.Float64Flag{Name: "rrf-c", Value: 1, Usage: "RRF constant c"},
			&cli.IntFlag{Name: "rank-base", Value: 0, Usage: "rank of a window's top chunk in RRF (1 with --rrf-c 60 is classic RRF)"},
			&cli.StringFlag{Name: "format", Value: "trec", Usage: "trec, jsonl or parquet"},
			&cli.StringFlag{Name: "out", Usage: "output file (default standard output; written whole, then renamed into place)"},
			&cli.StringFlag{Name: "tag", Value: "msrag", Usage: "run tag in the trec format"},
			&cli.IntFlag{Name: "batch", Value: 1024, Usage: "queries embedded and searched at once"},
			&cli.BoolFlag{Name: "skip-verify", Usage: "do not check the index files' sha256 when opening"},
		}, deviceFlags()...),
		Action: searchAction,
	})
}

func searchAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("search: unexpected arguments %v", c.Args().Slice())
	}
	opts := msrag.SearchOptions{
		K: c.Int("k"), WindowK: c.Int("window-k"), Fusion: c.String("fusion"),
		RRFC: c.Float64("rrf-c"), RankBase: c.Int("rank-base"),
	}
	if opts.K < 1 || opts.WindowK < 1 {
		return usagef("search: --k and --window-k must be at least 1")
	}
	if opts.RRFC <= 0 {
		return usagef("search: --rrf-c must be positive")
	}
	if c.IsSet("windows") {
		w, err := parseInts("windows", c.String("windows"))
		if err != nil {
			return err
		}
		opts.Windows = w
	}
	format := c.String("format")
	switch format {
	case "trec", "jsonl", "parquet":
	default:
		return usagef("search: --format %q: want trec, jsonl or parquet", format)
	}
	if c.Int("batch") < 1 {
		return usagef("search: --batch must be at least 1")
	}
	eo, err := embedderOptions(c)
	if err != nil {
		return err
	}
	dirs, err := indexDirs(c.String("index"))
	if err != nil {
		return err
	}
	qpath, err := queriesPath(c.String("queries"))
	if err != nil {
		return err
	}
	queries, err := corpus.ReadQueries(qpath, corpus.Options{})
	if err != nil {
		return err
	}
	gpus, err := faissGPUs(c)
	if err != nil {
		return err
	}
	ix, err := msrag.OpenWith(msrag.OpenOptions{EmbedderOptions: eo, SkipVerify: c.Bool("skip-verify"), GPUs: gpus}, dirs...)
	if err != nil {
		return err
	}
	defer ix.Close()

	out, commit, err := createOutput(c.String("out"), c.App.Writer)
	if err != nil {
		return err
	}
	defer commit(false)
	w := newRunWriter(format, out, c.String("tag"))
	bs := c.Int("batch")
	for lo := 0; lo < len(queries); lo += bs {
		batch := queries[lo:min(lo+bs, len(queries))]
		texts := make([]string, len(batch))
		for i, q := range batch {
			texts[i] = q.Text
		}
		hits, err := ix.Search(c.Context, texts, opts)
		if err != nil {
			return fmt.Errorf("search: queries %d to %d of %s: %w", lo+1, lo+len(batch), qpath, err)
		}
		for i, q := range batch {
			if err := w.write(q.ID, hits[i]); err != nil {
				return err
			}
		}
	}
	if err := w.close(); err != nil {
		return err
	}
	return commit(true)
}

// indexDirs expands --index: a comma-separated list, or one directory that holds
// shard directories (each with a manifest.json) rather than a manifest itself.
func indexDirs(arg string) ([]string, error) {
	var dirs []string
	for _, d := range strings.Split(arg, ",") {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, usagef("search: --index is empty")
	}
	if len(dirs) == 1 {
		if _, err := os.Stat(filepath.Join(dirs[0], "manifest.json")); err != nil {
			subs, _ := filepath.Glob(filepath.Join(dirs[0], "*", "manifest.json"))
			if len(subs) > 0 {
				dirs = dirs[:0]
				for _, m := range subs {
					dirs = append(dirs, filepath.Dir(m))
				}
			}
		}
	}
	return dirs, nil
}

// createOutput opens the output: standard output, or a temporary file beside
// path that commit(true) renames into place and commit(false) removes.
func createOutput(path string, stdout io.Writer) (io.Writer, func(ok bool) error, error) {
	if path == "" {
		bw := bufio.NewWriterSize(stdout, 1<<16)
		return bw, func(ok bool) error {
			if ok {
				return bw.Flush()
			}
			return nil
		}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-")
	if err != nil {
		return nil, nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	done := false
	return bw, func(ok bool) error {
		if done {
			return nil
		}
		done = true
		if !ok {
			f.Close()
			os.Remove(f.Name())
			return nil
		}
		err := bw.Flush()
		if err == nil {
			err = f.Close()
		} else {
			f.Close()
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}, nil
}

// runWriter writes search results in one of the output formats.
type runWriter struct {
	format, tag string
	w           io.Writer
	pq          *parquetRun
}

func newRunWriter(format string, w io.Writer, tag string) *runWriter {
	rw := &runWriter{format: format, tag: tag, w: w}
	if format == "parquet" {
		rw.pq = newParquetRun()
	}
	return rw
}

type jsonEvidence struct {
	Window     int     `json:"window"`
	ChunkRank  int     `json:"chunk_rank"`
	ChunkScore float32 `json:"chunk_score"`
	Start      int64   `json:"start"`
	End        int64   `json:"end"`
}

type jsonHit struct {
	DocID    string         `json:"doc_id"`
	Rank     int            `json:"rank"`
	Score    float64        `json:"score"`
	Evidence []jsonEvidence `json:"evidence"`
}

func evidenceOf(h msrag.Hit) []jsonEvidence {
	ev := make([]jsonEvidence, len(h.Evidence))
	for i, e := range h.Evidence {
		ev[i] = jsonEvidence{Window: e.Window, ChunkRank: e.ChunkRank, ChunkScore: e.ChunkScore, Start: e.Start, End: e.End}
	}
	return ev
}

func (rw *runWriter) write(qid string, hits []msrag.Hit) error {
	switch rw.format {
	case "trec":
		var b []byte
		for _, h := range hits {
			b = append(b, qid...)
			b = append(b, " Q0 "...)
			b = append(b, h.DocID...)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(h.Rank), 10)
			b = append(b, ' ')
			b = strconv.AppendFloat(b, h.Score, 'g', -1, 64)
			b = append(b, ' ')
			b = append(b, rw.tag...)
			b = append(b, '\n')
		}
		_, err := rw.w.Write(b)
		return err
	case "jsonl":
		line := struct {
			QueryID string    `json:"query_id"`
			Hits    []jsonHit `json:"hits"`
		}{QueryID: qid, Hits: make([]jsonHit, len(hits))}
		for i, h := range hits {
			line.Hits[i] = jsonHit{DocID: h.DocID, Rank: h.Rank, Score: h.Score, Evidence: evidenceOf(h)}
		}
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		_, err = rw.w.Write(append(b, '\n'))
		return err
	default:
		for _, h := range hits {
			ev, err := json.Marshal(evidenceOf(h))
			if err != nil {
				return err
			}
			rw.pq.add(qid, h.DocID, h.Rank, h.Score, string(ev))
		}
		return nil
	}
}

func (rw *runWriter) close() error {
	if rw.pq != nil {
		return rw.pq.writeTo(rw.w)
	}
	return nil
}
