package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/output"
	"github.com/msrag/msrag/remote"
)

// embedBlock is the number of texts read, embedded and written at a time: memory
// stays bounded whatever the input size.
const embedBlock = 4096

func init() {
	register(&cli.Command{
		Name:  "embed",
		Usage: "embed texts read from standard input, one vector per text in input order",
		Description: "Reads one JSON string per line (or, with --lines, one raw text per line) and writes one\n" +
			"vector per text: jsonl ({\"vector\": [...]} per line), npy (float32 [n, dims]) or parquet\n" +
			"(a fixed-size-list<float32> column \"vector\").",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "model", Value: onnx.DefaultModel, Usage: "model name (see msrag model list), model directory, or KIND:URL[#MODEL] of a model behind a server"},
			&cli.StringFlag{Name: "role", Value: "passage", Usage: "query or passage (chooses the model's prefix)"},
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "jsonl, npy or parquet"},
			&cli.StringFlag{Name: "out", Usage: "output file (default standard output)"},
			&cli.BoolFlag{Name: "lines", Usage: "read raw text lines instead of JSON strings"},
			&cli.BoolFlag{Name: "ids", Usage: "read token ids instead of texts: one JSON array of content ids per line (no prefix, no special tokens)"},
			&cli.BoolFlag{Name: "stats", Usage: "print tokens, padding and model time to standard error at the end"},
			&cli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, cuda or auto"},
			batchingFlag(),
			&cli.IntFlag{Name: "device-id", Usage: "CUDA device number"},
			threadsFlag(),
			sessionsFlag(),
			&cli.IntFlag{Name: "batch-tokens", Usage: "tokens per batch, padding included (0: default)"},
			quietFlag(),
			offlineFlag(),
			fp16Flag(),
		}, remoteModelFlags()...),
		Action: embedAction,
	})
}

func embedAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("embed: takes no arguments; texts come from standard input")
	}
	if _, err := outFileFlag(c, "embed"); err != nil {
		return err
	}
	role, err := onnx.ParseRole(c.String("role"))
	if err != nil {
		return usagef("embed: --role %q: want query or passage", c.String("role"))
	}
	format, err := output.ParseVectorFormat(c.String("format"))
	if err != nil {
		return usagef("embed: --format: %w", err)
	}
	if c.Bool("ids") && c.Bool("lines") {
		return usagef("embed: --ids and --lines exclude each other")
	}
	switch c.String("device") {
	case onnx.DeviceCPU, onnx.DeviceCUDA, onnx.DeviceAuto:
	default:
		return usagef("embed: --device %q: want cpu, cuda or auto", c.String("device"))
	}
	if err := embed.CheckOptions(c.String("model"), embed.Options{Device: c.String("device"), DeviceID: c.Int("device-id")}); err != nil {
		return deviceUsage("embed", c.String("model"), err)
	}
	if err := checkModelFlags(c, "embed"); err != nil {
		return err
	}
	if remote.IsModelSpec(c.String("model")) {
		return embedRemote(c, role, format)
	}
	batching, err := batchingOption(c)
	if err != nil {
		return err
	}
	fo := onnx.FetchOptions{Log: c.App.ErrWriter, Offline: c.Bool("offline")}
	dir, err := onnx.EnsureModel(c.Context, c.String("model"), fo)
	if err != nil {
		return err
	}
	if c.Bool("fp16") {
		if err := onnx.EnsureFP16(c.Context, dir, fo); err != nil {
			return err
		}
	}
	emb, err := onnx.Open(dir, onnx.Options{
		Device: c.String("device"), DeviceID: c.Int("device-id"), Threads: c.Int("threads"), Sessions: c.Int("sessions"),
		TokenBudget: c.Int("batch-tokens"), Batching: batching, Log: noteWriter(c), FP16: c.Bool("fp16"),
	})
	if err != nil {
		return err
	}
	defer emb.Close()
	err = embedOutput(c, format, emb.Dims(), func(vw *output.VectorWriter) error {
		return embedAll(c, emb, role, vw)
	})
	if err == nil && c.Bool("stats") {
		printEmbedStats(c.App.ErrWriter, emb.Stats(), emb.Sessions())
	}
	return err
}

// embedAll embeds standard input block by block into vw.
func embedAll(c *cli.Context, emb *onnx.Embedder, role onnx.Role, vw *output.VectorWriter) error {
	rd := newTextReader(c.App.Reader, c.Bool("lines"))
	for {
		var vecs []float32
		if c.Bool("ids") {
			seqs, err := rd.nextIDs(embedBlock, emb.Tokenizer().VocabSize())
			if err != nil || len(seqs) == 0 {
				return err
			}
			if vecs, err = emb.EmbedTokens(c.Context, seqs, role); err != nil {
				return fmt.Errorf("embed: lines %d to %d: %w", rd.line-len(seqs)+1, rd.line, err)
			}
		} else {
			texts, err := rd.next(embedBlock)
			if err != nil || len(texts) == 0 {
				return err
			}
			if vecs, err = emb.Embed(c.Context, texts, role); err != nil {
				return err
			}
		}
		if err := vw.Write(vecs); err != nil {
			return fmt.Errorf("embed: writing %s: %w", c.String("format"), err)
		}
	}
}

// embedOutput runs fn with a vector writer on --out and closes it: a file
// written atomically (an npy file streamed, its header patched at the end),
// or stdout, a device, a FIFO or a socket (an npy output held until the
// end), as writeOutput writes.
func embedOutput(c *cli.Context, format output.VectorFormat, dims int, fn func(*output.VectorWriter) error) error {
	path, stdout := c.String("out"), c.App.Writer
	run := func(w io.Writer, at io.WriterAt) error {
		vw, err := output.NewVectorWriter(w, at, format, dims)
		if err != nil {
			return err
		}
		if err := fn(vw); err != nil {
			return err
		}
		return vw.Close()
	}
	if path == "" {
		bw := bufio.NewWriterSize(stdout, 1<<20)
		if err := run(bw, nil); err != nil {
			return err
		}
		return bw.Flush()
	}
	f, err := safefile.CreateOutput(c.Context, path)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	var at io.WriterAt
	if f.Seekable() {
		at = f
	}
	if err := run(f, at); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// printEmbedStats prints the embedder's counters; the model time is the
// wall time during which at least one session ran.
func printEmbedStats(w io.Writer, st onnx.Stats, sessions int) {
	secs := st.Busy.Seconds()
	fmt.Fprintf(w, "embed: %d sequences, %d tokens, %d padded tokens (padding %.2f%% of tokens), %d batches on %d sessions, model time %.3fs, %.1f tokens/s, %.1f sequences/s\n",
		st.Sequences, st.Tokens, st.PaddedTokens, 100*float64(st.PaddedTokens-st.Tokens)/math.Max(float64(st.Tokens), 1),
		st.Batches, sessions, secs, float64(st.Tokens)/math.Max(secs, 1e-9), float64(st.Sequences)/math.Max(secs, 1e-9))
}

// textReader reads texts from standard input, one per line.
type textReader struct {
	sc    *bufio.Scanner
	lines bool
	line  int
}

func newTextReader(r io.Reader, lines bool) *textReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	return &textReader{sc: sc, lines: lines}
}

// next returns up to n texts; none at the end of the input.
func (r *textReader) next(n int) ([]string, error) {
	var texts []string
	for len(texts) < n && r.sc.Scan() {
		r.line++
		b := r.sc.Bytes()
		if r.lines {
			texts = append(texts, string(b))
			continue
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("embed: standard input line %d: want a JSON string (or use --lines): %v", r.line, err)
		}
		texts = append(texts, s)
	}
	if err := r.sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: reading standard input after line %d: %w", r.line, err)
	}
	return texts, nil
}

// nextIDs returns up to n id sequences, each id in [0, vocab); none at the
// end of the input.
func (r *textReader) nextIDs(n, vocab int) ([][]int32, error) {
	var seqs [][]int32
	for len(seqs) < n && r.sc.Scan() {
		r.line++
		var ids []int32
		if err := json.Unmarshal(r.sc.Bytes(), &ids); err != nil {
			return nil, fmt.Errorf("embed: standard input line %d: want a JSON array of token ids: %v", r.line, err)
		}
		for k, id := range ids {
			if id < 0 || int(id) >= vocab {
				return nil, fmt.Errorf("embed: standard input line %d: token id %d (position %d) is outside the tokenizer's vocabulary of %d ids (0 to %d)",
					r.line, id, k, vocab, vocab-1)
			}
		}
		seqs = append(seqs, ids)
	}
	if err := r.sc.Err(); err != nil {
		return nil, fmt.Errorf("embed: reading standard input after line %d: %w", r.line, err)
	}
	return seqs, nil
}

// embedRemote embeds standard input through a model behind a server: texts
// only (a server takes no token ids), each cut to fit as Embed does.
func embedRemote(c *cli.Context, role onnx.Role, format output.VectorFormat) error {
	if c.Bool("ids") {
		return usagef("embed: --ids needs an in-process model; a server takes texts")
	}
	eo, err := embedderOptions(c)
	if err != nil {
		return err
	}
	emb, err := openEmbedder(c, c.String("model"), eo)
	if err != nil {
		return err
	}
	defer emb.Close()
	err = embedOutput(c, format, emb.Spec().Dims, func(vw *output.VectorWriter) error {
		rd := newTextReader(c.App.Reader, c.Bool("lines"))
		for {
			texts, err := rd.next(embedBlock)
			if err != nil || len(texts) == 0 {
				return err
			}
			vecs, err := emb.Embed(c.Context, texts, role)
			if err != nil {
				return fmt.Errorf("embed: lines %d to %d: %w", rd.line-len(texts)+1, rd.line, err)
			}
			if err := vw.Write(vecs); err != nil {
				return fmt.Errorf("embed: writing %s: %w", c.String("format"), err)
			}
		}
	})
	if err == nil && c.Bool("stats") {
		printRemoteStats(c.App.ErrWriter, "embed", emb)
	}
	return err
}
