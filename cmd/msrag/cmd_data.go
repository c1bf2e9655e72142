package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/hub"
	"github.com/msrag/msrag/mteb"
)

func init() {
	register(&cli.Command{
		Name:  "data",
		Usage: "fetch evaluation datasets",
		Subcommands: []*cli.Command{
			{
				Name:      "fetch",
				Usage:     "fetch MTEB retrieval datasets from the Hugging Face hub into the cache",
				ArgsUsage: "mteb:TASK... | hf:mteb/NAME[@REVISION]...",
				Description: "mteb:TASK (e.g. mteb:SciFact) is a retrieval task of mteb " + mteb.Version + ", whose task metadata names the\n" +
					"dataset repository and the revision. hf:mteb/NAME[@REVISION] names the repository (REVISION a commit,\n" +
					"branch or tag; without one, the revision the task reading mteb/NAME pins). Lists the repository at\n" +
					"the revision, downloads its corpus,\n" +
					"queries and the qrels of every split, checks each file against the listing (size and sha256\n" +
					"or git blob id), opens the result as a dataset and only then moves it into place as\n" +
					"DIR/hf--mteb--NAME@REVISION. Prints that directory, which msrag eval --dataset and a suite's\n" +
					"datasets take. A dataset already present is not fetched again (--force fetches it anyway).\n\n" +
					"The hub is $MSRAG_HF_ENDPOINT, else $HF_ENDPOINT, else https://huggingface.co; $HF_TOKEN (else\n" +
					"$HUGGING_FACE_HUB_TOKEN, else the token file of hf auth login), if any, is sent as a bearer token;\n" +
					"with HF_HUB_OFFLINE=1 nothing is asked of the hub and only a dataset already present is printed.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "dir", Usage: "directory that holds the datasets (default: the cache's data directory, " + hub.EnvCache + "/data)"},
					&cli.BoolFlag{Name: "force", Usage: "fetch again even when present"},
					&cli.BoolFlag{Name: "quiet", Usage: "no progress on standard error"},
					&cli.DurationFlag{Name: "request-timeout", Usage: "longest wait for the hub to answer a request or send more of a file (0: 1m)"},
				},
				Action: dataFetch,
			},
		},
	})
}

func dataFetch(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("data fetch: name at least one dataset, as mteb:TASK or hf:mteb/NAME[@REVISION]")
	}
	// Every name is checked before anything is fetched.
	for _, name := range c.Args().Slice() {
		if strings.HasPrefix(name, "-") {
			return usagef("data fetch: flag %s comes after a dataset name, where it is read as a name: put the flags before the names (msrag data fetch %s hf:mteb/NAME)", name, name)
		}
		if _, err := hub.ParseDatasetName(name); err != nil {
			return usageError{err}
		}
	}
	if c.Duration("request-timeout") < 0 {
		return usagef("data fetch: --request-timeout %v: must not be negative", c.Duration("request-timeout"))
	}
	opts := hub.DatasetOptions{Dir: c.String("dir"), Force: c.Bool("force")}
	opts.Timeout = c.Duration("request-timeout")
	if !c.Bool("quiet") {
		opts.Log = c.App.ErrWriter
	}
	for _, name := range c.Args().Slice() {
		dir, err := hub.FetchDataset(c.Context, name, opts)
		if err != nil {
			if errors.Is(err, hub.ErrEndpoint) {
				return usageError{err}
			}
			return err
		}
		fmt.Fprintln(c.App.Writer, dir)
	}
	return nil
}
