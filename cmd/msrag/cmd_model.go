package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

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
				Usage:     "fetch models into $MSRAG_CACHE/models (built-in names, or hf:ORG/NAME with MSRAG_HF_ENDPOINT set)",
				ArgsUsage: "NAME...",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "fetch again even when present"},
				},
				Action: modelFetch,
			},
		},
	})
}

func modelList(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("model list: takes no arguments")
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDIMS\tMAX TOKENS\tPOOLING\tSTATE\tDESCRIPTION")
	seen := map[string]bool{}
	row := func(m onnx.ModelInfo, state string) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", m.Name, m.Dims, m.MaxTokens, m.Pooling, state, m.Description)
	}
	for _, m := range onnx.BuiltinModels() {
		seen[m.Name] = true
		state := "not fetched"
		if _, err := os.Stat(filepath.Join(onnx.ModelsDir(), m.Name, onnx.InfoFile)); err == nil {
			state = "fetched"
		}
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

func modelFetch(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("model fetch: name at least one model (see msrag model list)")
	}
	for _, name := range c.Args().Slice() {
		dir, err := onnx.Fetch(c.Context, name, onnx.FetchOptions{Force: c.Bool("force"), Log: c.App.ErrWriter})
		if err != nil {
			return err
		}
		fmt.Fprintln(c.App.Writer, dir)
	}
	return nil
}
