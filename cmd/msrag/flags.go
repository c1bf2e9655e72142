package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/testembed"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/remote"
)

// parseInts parses a comma-separated list of positive integers, such as
// --windows 100,200,500, and rejects zero, negative and repeated values.
func parseInts(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--%s is empty: give sizes such as 100,200,500", flag)
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		switch {
		case err != nil:
			return nil, usagef("--%s %q: %q is not a number", flag, s, f)
		case v <= 0:
			return nil, usagef("--%s %q: %d is not positive", flag, s, v)
		case slices.Contains(out, v):
			return nil, usagef("--%s %q: %d is repeated", flag, s, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// windowsFlag parses --windows into sliding windows with --stride and
// --short-tail (when the command has them).
func windowsFlag(c *cli.Context) ([]chunk.Window, error) {
	sizes, err := parseInts("windows", c.String("windows"))
	if err != nil {
		return nil, err
	}
	ws := chunk.Sizes(sizes...)
	for i := range ws {
		ws[i].Stride, ws[i].ShortTail = c.Int("stride"), c.Bool("short-tail")
	}
	return ws, nil
}

// shortTailFlag keeps each document's last window where the stride puts it.
func shortTailFlag() cli.Flag {
	return &cli.BoolFlag{Name: "short-tail", Usage: "keep each document's last window where the stride puts it, shorter than the window (as indices before the tail was recorded); default: moved back to end at the document's end, full size"}
}

// parseShard parses --shard i/n.
func parseShard(s string) (corpus.Shard, error) {
	if s == "" {
		return corpus.Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return corpus.Shard{}, usagef("--shard %q: want i/n with 0 <= i < n", s)
	}
	return corpus.Shard{I: i, N: n}, nil
}

// parseMetric parses --metric.
func parseMetric(s string) (faiss.Metric, error) {
	switch s {
	case "ip":
		return faiss.InnerProduct, nil
	case "l2":
		return faiss.L2, nil
	}
	return 0, usagef("--metric %q: want ip or l2", s)
}

// deviceFlags are the flags that choose where the embedder runs.
func deviceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "device", Value: "cpu", Usage: "where the embedder runs: cpu, cuda or auto (cuda if it can be had, else cpu)"},
		&cli.IntFlag{Name: "device-id", Usage: "CUDA device number"},
		&cli.StringFlag{Name: "gpus", Usage: "GPUs, e.g. 0,1,2,3: one embedder session per GPU with the batches handed out round-robin, and for search each window's FAISS index sharded across them; sets --device cuda unless --device is given"},
		&cli.IntFlag{Name: "threads", Usage: "ONNX Runtime intra-op threads (0: all cores)"},
		&cli.IntFlag{Name: "batch-tokens", Usage: "embedder batch size in tokens, padding included (0: the embedder's default)"},
	}
}

// faissGPUs returns the GPUs the FAISS indices go to: --gpus, or --device-id
// with --device cuda, or that GPU with --device auto when this build has FAISS
// GPU support and sees a GPU (saying so otherwise).
func faissGPUs(c *cli.Context) ([]int, error) {
	if gpus, err := gpuList(c); err != nil || gpus != nil {
		return gpus, err
	}
	switch embedDevice(c) {
	case onnx.DeviceCUDA:
		return []int{c.Int("device-id")}, nil
	case onnx.DeviceAuto:
		if faiss.GPUAvailable && faiss.NumGPUs() > 0 {
			return []int{c.Int("device-id")}, nil
		}
		fmt.Fprintln(c.App.ErrWriter, "msrag: device auto: FAISS searches on the CPU (this build has no FAISS GPU support or sees no GPU)")
	}
	return nil, nil
}

// gpuList parses --gpus: nil when it is not given.
func gpuList(c *cli.Context) ([]int, error) {
	s := c.String("gpus")
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 || slices.Contains(out, v) {
			return nil, usagef("--gpus %q: want distinct device numbers such as 0,1", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// embedDevice is --device, or cuda when --gpus is given without --device.
func embedDevice(c *cli.Context) string {
	if c.String("gpus") != "" && !c.IsSet("device") {
		return onnx.DeviceCUDA
	}
	return c.String("device")
}

func embedderOptions(c *cli.Context) (onnx.Options, error) {
	switch c.String("device") {
	case onnx.DeviceCPU, onnx.DeviceCUDA, onnx.DeviceAuto:
	default:
		return onnx.Options{}, usagef("--device %q: want cpu, cuda or auto", c.String("device"))
	}
	if _, err := gpuList(c); err != nil {
		return onnx.Options{}, err
	}
	return onnx.Options{
		Device:      embedDevice(c),
		DeviceID:    c.Int("device-id"),
		Threads:     c.Int("threads"),
		TokenBudget: c.Int("batch-tokens"),
		Log:         c.App.ErrWriter,
	}, nil
}

// openEmbedder opens the model called name: testembed.Name is the
// non-semantic test embedder, KIND:URL[#MODEL] a model behind a server
// (opened with the remote flags), anything else a model for
// msrag.OpenEmbedder (opened with the device flags).
func openEmbedder(c *cli.Context, name string) (msrag.Embedder, error) {
	if name == testembed.Name {
		return testembed.OpenNamed()
	}
	if remote.IsModelSpec(name) {
		return openRemote(c, name)
	}
	eo, err := embedderOptions(c)
	if err != nil {
		return nil, err
	}
	gpus, err := gpuList(c)
	if err != nil {
		return nil, err
	}
	return msrag.OpenEmbedder(name, eo, gpus...)
}

// modelFlag is --model.
func modelFlag() cli.Flag {
	return &cli.StringFlag{Name: "model", Value: onnx.DefaultModel,
		Usage: "model name (msrag model list), model directory, KIND:URL[#MODEL] of a model behind a server (openai:http://host:8000/v1#name, tei:http://host:8080), or " + testembed.Name + " (non-semantic, tests only)"}
}

// corpusFlags name the columns of the corpus.
func corpusFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "id-col", Value: "_id", Usage: "id column (Parquet, Arrow) or key (JSONL)"},
		&cli.StringFlag{Name: "title-col", Value: "title", Usage: "title column or key (absent: no titles)"},
		&cli.StringFlag{Name: "text-col", Value: "text", Usage: "text column or key"},
	}
}

func corpusOptions(c *cli.Context) corpus.Options {
	return corpus.Options{
		IDColumn:    c.String("id-col"),
		TitleColumn: c.String("title-col"),
		TextColumn:  c.String("text-col"),
	}
}

func fmtInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// openCorpusReader opens a corpus file or directory. A BEIR/MTEB dataset
// directory (corpus + queries + qrels/) opens its corpus; any other directory is
// read as .txt/.md files.
func openCorpusReader(path string, opts corpus.Options) (corpus.Reader, error) {
	if isDataset(path) {
		ds, err := corpus.OpenDataset(path)
		if err != nil {
			return nil, err
		}
		return ds.OpenCorpus(opts)
	}
	return corpus.Open(path, opts)
}

// isDataset reports whether path is a directory with a qrels folder.
func isDataset(path string) bool {
	st, err := os.Stat(filepath.Join(path, "qrels"))
	return err == nil && st.IsDir()
}

// queriesPath returns the queries file of a dataset directory, or path itself.
func queriesPath(path string) (string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		ds, err := corpus.OpenDataset(path)
		if err != nil {
			return "", err
		}
		return ds.Queries, nil
	}
	return path, nil
}

// embeddingFlags are the flags of how windows become vectors; eval takes a
// list of modes.
func embeddingFlags(list bool) []cli.Flag {
	usage := "independent (each chunk encoded alone) or late (each document encoded once in segments of the model's maximum length, every window pooled from its tokens' vectors)"
	if list {
		usage = "independent, late, or both (independent,late: both indices, reported side by side with paired statistics)"
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "embedding", Value: "independent", Usage: usage},
		&cli.IntFlag{Name: "late-overlap", Usage: "with --embedding late: content tokens consecutive segments of a long document share (0: a quarter of a segment)"},
		&cli.StringFlag{Name: "late-edges", Value: "segment", Usage: "with --embedding late: segment (a window that starts or ends its segment also pools [CLS] and the prefix, or [SEP]) or none (its own tokens only)"},
	}
}

// lateFlags are the late embedding's settings.
type lateFlags struct {
	overlap int
	edges   late.Edges
}

// embeddingsFlag parses --embedding (a list where list is set) and checks
// --late-overlap and --late-edges against it.
func embeddingsFlag(c *cli.Context, list bool) ([]msrag.Embedding, lateFlags, error) {
	var out []msrag.Embedding
	names := []string{c.String("embedding")}
	if list {
		names = strings.Split(names[0], ",")
	}
	for _, n := range names {
		e, err := msrag.ParseEmbedding(strings.TrimSpace(n))
		if err != nil || strings.TrimSpace(n) == "" {
			return nil, lateFlags{}, usagef("--embedding %q: want independent or late", c.String("embedding"))
		}
		if slices.Contains(out, e) {
			return nil, lateFlags{}, usagef("--embedding %q: %v is repeated", c.String("embedding"), e)
		}
		out = append(out, e)
	}
	lf := lateFlags{overlap: c.Int("late-overlap")}
	edges, err := late.ParseEdges(c.String("late-edges"))
	switch {
	case err != nil:
		return nil, lateFlags{}, usagef("--late-edges %q: want segment or none", c.String("late-edges"))
	case lf.overlap < 0:
		return nil, lateFlags{}, usagef("--late-overlap %d: want 0 (a quarter of a segment) or more tokens", lf.overlap)
	case (lf.overlap > 0 || edges != late.EdgesSegment) && !slices.Contains(out, msrag.Late):
		return nil, lateFlags{}, usagef("--late-overlap and --late-edges are for --embedding late")
	}
	lf.edges = edges
	return out, lf, nil
}
