package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/tokenizer"
)

func init() {
	register(&cli.Command{
		Name:  "tokenize",
		Usage: "encode texts from stdin with a model's tokenizer.json; one JSON object per line out",
		Description: "Reads one JSON string per line from stdin (--lines: plain lines, without the newline) and\n" +
			"writes one line per text: {\"ids\": [...], \"spans\": [[start, end], ...]}, spans being byte\n" +
			"ranges of the input text ([0, 0] for special tokens).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Usage: "model name in $MSRAG_CACHE/models, or a model directory"},
			&cli.StringFlag{Name: "tokenizer", Usage: "path of a tokenizer.json"},
			&cli.BoolFlag{Name: "no-special", Usage: "do not add the special tokens of the post-processor"},
			&cli.IntFlag{Name: "max-length", Usage: "truncate to N tokens, special tokens included (0: as the tokenizer says, <0: never)"},
			&cli.BoolFlag{Name: "lines", Usage: "read plain text lines instead of JSON strings"},
		},
		Action: tokenizeAction,
	})
}

// modelTokenizerPath resolves --model NAME to its tokenizer.json through the
// model registry (onnx.ResolveModel): a model directory, or a fetched model in
// $MSRAG_CACHE/models.
func modelTokenizerPath(name string) (string, error) {
	dir, err := onnx.ResolveModel(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, onnx.TokenizerFile), nil
}

func tokenizeAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("tokenize: takes no arguments (texts come from stdin)")
	}
	model, path := c.String("model"), c.String("tokenizer")
	switch {
	case model != "" && path != "":
		return usagef("tokenize: give --model or --tokenizer, not both")
	case model == "" && path == "":
		return usagef("tokenize: give --model NAME or --tokenizer PATH")
	case model != "":
		var err error
		if path, err = modelTokenizerPath(model); err != nil {
			return fmt.Errorf("tokenize: %w", err)
		}
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		return fmt.Errorf("tokenize: %w", err)
	}
	opts := tokenizer.Options{NoSpecial: c.Bool("no-special"), MaxLength: c.Int("max-length")}
	return tokenizeStream(c, tok, opts, c.App.Reader, c.App.Writer, c.Bool("lines"))
}

// tokenizeStream encodes batches of lines on all cores and writes them in
// input order, checking for cancellation between batches.
func tokenizeStream(c *cli.Context, tok *tokenizer.Tokenizer, opts tokenizer.Options, in io.Reader, out io.Writer, plain bool) error {
	const batch = 512
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	w := bufio.NewWriterSize(out, 256<<10)
	texts := make([]string, 0, batch)
	line := 0
	var buf []byte
	flush := func() error {
		for _, e := range tok.EncodeBatch(texts, opts) {
			buf = appendEncodingJSON(buf[:0], e)
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("tokenize: writing output: %w", err)
			}
		}
		texts = texts[:0]
		return c.Context.Err()
	}
	for sc.Scan() {
		line++
		if plain {
			texts = append(texts, sc.Text())
		} else {
			var s string
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				return fmt.Errorf("tokenize: stdin line %d: not a JSON string: %w", line, err)
			}
			texts = append(texts, s)
		}
		if len(texts) == batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("tokenize: reading stdin after line %d: %w", line, err)
	}
	if err := flush(); err != nil {
		return err
	}
	return w.Flush()
}

func appendEncodingJSON(b []byte, e tokenizer.Encoding) []byte {
	b = append(b, `{"ids":[`...)
	for i, id := range e.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	b = append(b, `],"spans":[`...)
	for i, o := range e.Offsets {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(o.Start), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(o.End), 10)
		b = append(b, ']')
	}
	return append(b, "]}\n"...)
}
