package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/faiss"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/late"
	"github.com/msrag/msrag/onnx"
)

// deviceFlags are the flags that choose where the embedder runs.
func deviceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "device", Value: "cpu", Usage: "where the embedder runs, and in search and eval the FAISS indices: cpu, cuda or auto (cuda if it can be had, else cpu)"},
		&cli.IntFlag{Name: "device-id", Usage: "CUDA device number"},
		&cli.StringFlag{Name: "gpus", Usage: "GPUs, e.g. 0,1,2,3: one embedder session per GPU with the batches handed out as the GPUs come free, and for search each window's FAISS index sharded across them; sets --device cuda unless --device is given"},
		threadsFlag(),
		sessionsFlag(),
		&cli.IntFlag{Name: "batch-tokens", Usage: "embedder batch size in tokens, padding included (0: the embedder's default)"},
		offlineFlag(),
		batchingFlag(),
		fp16Flag(),
	}
}

// fp16Flag is --fp16: the model's half-precision file.
func fp16Flag() cli.Flag {
	return &cli.BoolFlag{Name: "fp16", Usage: "run the model's fp16 conversion (model_fp16.onnx, made on first use by the converter of scripts/setup-fp16.sh; for GPUs, slower on the CPU); " +
		"an index records the precision and is searched only in it"}
}

// threadsFlag is --threads: the cores the model runs on.
func threadsFlag() cli.Flag {
	return &cli.IntFlag{Name: "threads", Usage: "ONNX Runtime intra-op threads, of all the sessions together (0: all cores)"}
}

// sessionsFlag is --sessions: how many copies of the model run at once.
func sessionsFlag() cli.Flag {
	return &cli.IntFlag{Name: "sessions", Usage: "ONNX Runtime sessions of the model, the texts handed out to them and run at the same time, --threads shared among them " +
		"(0: on the cpu with --batching single, one per thread, each of one thread; otherwise one with all the threads)"}
}

// faissGPUs returns the GPUs the FAISS indices go to: --gpus, or --device-id
// with --device cuda, or that GPU with --device auto when this build has FAISS
// GPU support, sees a GPU and --window-k fits FAISS on GPUs (saying so
// otherwise). GPUs asked for that this build cannot use, or a --window-k
// they cannot return, are errors before any work (msrag.CheckGPUs).
func faissGPUs(c *cli.Context) ([]int, error) {
	gpus, err := gpuList(c)
	if err != nil {
		return nil, err
	}
	k := c.Int("window-k")
	if gpus == nil {
		switch embedDevice(c) {
		case onnx.DeviceCUDA:
			gpus = []int{c.Int("device-id")}
		case onnx.DeviceAuto:
			if faiss.GPUAvailable && faiss.NumGPUs() > 0 && k <= faiss.MaxGPUK {
				return []int{c.Int("device-id")}, nil
			}
			fmt.Fprintln(noteWriter(c), "msrag: device auto: FAISS searches on the CPU (this build has no FAISS GPU support, sees no GPU, or --window-k is more than FAISS on GPUs returns)")
		}
	}
	err = msrag.CheckGPUs(gpus, k)
	switch {
	case errors.Is(err, faiss.ErrArgument):
		return nil, usagef("--window-k %d is more than FAISS on GPUs returns (%d): ask for fewer, or search on the CPU (--device cpu, or auto)", k, faiss.MaxGPUK)
	case err != nil:
		return nil, fmt.Errorf("--device %s: %w", embedDevice(c), err)
	}
	return gpus, nil
}

// gpuList parses --gpus: nil when it is not given; given empty, it is a
// usage error (it would choose no GPU and do nothing).
func gpuList(c *cli.Context) ([]int, error) {
	s := c.String("gpus")
	if !c.IsSet("gpus") {
		return nil, nil
	}
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--gpus is empty: name the GPUs, such as 0 or 0,1")
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

// embedderOptions maps the device flags, and the server flags of the
// commands that have them (in Extra, a remote.OpenOptions), to the options of
// every embedder kind.
func embedderOptions(c *cli.Context) (embed.Options, error) {
	switch c.String("device") {
	case onnx.DeviceCPU, onnx.DeviceCUDA, onnx.DeviceAuto:
	default:
		return embed.Options{}, usagef("--device %q: want cpu, cuda or auto", c.String("device"))
	}
	gpus, err := gpuList(c)
	if err != nil {
		return embed.Options{}, err
	}
	batching, err := batchingOption(c)
	if err != nil {
		return embed.Options{}, err
	}
	return embed.Options{
		Batching:    batching.String(),
		Device:      embedDevice(c),
		DeviceID:    c.Int("device-id"),
		GPUs:        gpus,
		Threads:     c.Int("threads"),
		Sessions:    c.Int("sessions"),
		BatchTokens: c.Int("batch-tokens"),
		Log:         noteWriter(c),
		Offline:     c.Bool("offline"),
		Extra:       []any{remoteOptions(c), onnx.Options{FP16: c.Bool("fp16")}},
	}, nil
}

// openEmbedder opens the model called name with the kind that claims it
// (msrag.OpenEmbedder): a model behind a server (KIND:URL[#MODEL], with the
// server flags), hashembed.Name (the non-semantic test embedder), anything
// else an in-process model (with eo: the device flags as the command maps
// them).
func openEmbedder(c *cli.Context, name string, eo embed.Options) (msrag.Embedder, error) {
	e, err := msrag.OpenEmbedder(c.Context, name, eo)
	if errors.Is(err, onnx.ErrUnknownModel) {
		return nil, usageError{fmt.Errorf("--model: %w", err)}
	}
	return e, remoteUsage(err)
}

// reopenEmbedder opens the model an index's manifest records with eo, the
// options of the device flags as a search maps them (searchModelOptions)
// and of the server flags (--endpoints, --tokenizer).
func reopenEmbedder(c *cli.Context, eo embed.Options, m msrag.ModelInfo) (msrag.Embedder, error) {
	e, err := msrag.ReopenEmbedder(c.Context, m, eo)
	return e, remoteUsage(err)
}

// modelFlag is --model.
func modelFlag() cli.Flag {
	return &cli.StringFlag{Name: "model", Value: onnx.DefaultModel,
		Usage: "model name (msrag model list), model directory, KIND:URL[#MODEL] of a model behind a server (openai:http://host:8000/v1#name, tei:http://host:8080), " + hashembed.Name + " (non-semantic, tests only), or none (no model: channels of the texts alone, cut by --tokenizer)"}
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
