package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/remote"
)

// The index a search opens: its directories (--index, shards) and its model.

// openIndex opens the index (or shards) named by --index with the model its
// manifest names, opened with the device flags; an index built with --model
// none opens without a model.
func openIndex(c *cli.Context, arg string) (*msrag.Index, error) {
	dirs, err := indexDirs(arg)
	if err != nil {
		return nil, err
	}
	man, err := msrag.ReadManifest(dirs[0])
	if err != nil {
		return nil, err
	}
	if err := checkServerFlags(c, "search", servedKind(man.Model.Origin.Kind), modelOf(dirs[0], man.Model)); err != nil {
		return nil, err
	}
	if kind := man.Model.Origin.Kind; c.Bool("fp16") && kind != "" && kind != onnx.KindName {
		return nil, usagef("search: --fp16 is for an index of an ONNX model run in this process, and %s was built with %s", dirs[0], modelOf(dirs[0], man.Model))
	}
	eo, err := searchModelOptions(c, dirs[0], man.Model)
	if err != nil {
		return nil, err
	}
	if man.Model.None() { // no model to open, nothing on GPUs
		return msrag.OpenWith(msrag.OpenOptions{SkipVerify: c.Bool("skip-verify")}, dirs...)
	}
	gpus, err := faissGPUs(c)
	if err != nil {
		return nil, err
	}
	emb, err := reopenEmbedder(c, eo, man.Model)
	if err != nil {
		return nil, fmt.Errorf("search: index %s was built with model %q: %w", dirs[0], man.Model.Name, err)
	}
	return msrag.OpenWith(msrag.OpenOptions{Embedder: emb, CloseEmbedder: true, SkipVerify: c.Bool("skip-verify"), GPUs: gpus}, dirs...)
}

// servedKind reports whether an embedder kind is one of package remote's.
func servedKind(kind string) bool {
	_, err := remote.ParseAPI(kind)
	return err == nil && strings.ToLower(kind) == kind
}

// modelOf says which model an index's queries go through, for a message.
func modelOf(dir string, m msrag.ModelInfo) string {
	if m.None() {
		return "index " + dir + " was built with --model none: its queries go through no model"
	}
	return "index " + dir + "'s model " + m.Name + " runs in this process"
}

// indexDirs expands --index: a comma-separated list, or one directory that holds
// shard directories (each an index) rather than an index itself.
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
	if len(dirs) > 1 {
		return dirs, nil
	}
	return shardDirs(dirs[0]), nil
}

// shardDirs returns the shards dir stands for (msrag.ShardDirs), or dir
// (opening it says what is wrong).
func shardDirs(dir string) []string {
	if dirs := msrag.ShardDirs(dir); dirs != nil {
		return dirs
	}
	return []string{dir}
}
