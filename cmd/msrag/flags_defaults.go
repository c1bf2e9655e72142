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
	"github.com/msrag/msrag/embed"
)

// indexDefaults takes --model and --windows from the index in --index when
// they are not given and it records them (its model's name, its sliding
// windows), saying so, so that eval --index IDX needs neither. No index
// there yet (eval builds one) leaves the flags' defaults.
func indexDefaults(c *cli.Context, cmd string) error {
	dir := c.String("index")
	if dir == "" || c.IsSet("model") && c.IsSet("windows") {
		return nil
	}
	s, err := msrag.ReadShards(shardDirs(dir)...)
	if err != nil {
		return nil
	}
	m := s.Manifests[0]
	var took []string
	if !c.IsSet("model") && m.Model.Name != "" && !noModel(c) {
		if err := c.Set("model", m.Model.Name); err != nil {
			return err
		}
		took = append(took, "--model "+m.Model.Name)
	}
	var sizes []string
	for _, w := range m.Windows {
		if !w.Truncate {
			sizes = append(sizes, strconv.Itoa(w.Size))
		}
	}
	if !c.IsSet("windows") && len(sizes) > 0 {
		if err := c.Set("windows", strings.Join(sizes, ",")); err != nil {
			return err
		}
		took = append(took, "--windows "+strings.Join(sizes, ","))
	}
	if len(took) > 0 {
		fmt.Fprintf(noteWriter(c), "%s: %s, as the index in %s records\n", cmd, strings.Join(took, " "), dir)
	}
	return nil
}

// fitDefaultWindows replaces windows, when they are --windows's default,
// by those that fit the model spec describes (chunk.Fit: 100,200,254 for a
// model of 256 tokens with two special ones), saying so. Windows given are
// left for the chunker to refuse, naming a set that fits.
func fitDefaultWindows(c *cli.Context, cmd string, windows []chunk.Window, spec embed.Spec) []chunk.Window {
	if c.IsSet("windows") || spec.MaxTokens <= 0 {
		return windows
	}
	room := spec.MaxTokens - spec.PrefixTokens[embed.Passage] - spec.SpecialTokens
	var sizes []int
	for _, w := range windows {
		if !w.Truncate {
			sizes = append(sizes, w.Size)
		}
	}
	fit := chunk.Fit(sizes, room)
	if slices.Equal(fit, sizes) || len(windows) == 0 {
		return windows
	}
	out := chunk.Sizes(fit...)
	for i := range out {
		out[i].Stride, out[i].ShortTail = windows[0].Stride, windows[0].ShortTail
	}
	for _, w := range windows {
		if w.Truncate {
			out = append(out, w)
		}
	}
	fmt.Fprintf(noteWriter(c), "%s: windows %s, which fit %s (%d tokens of content; --windows chooses others)\n",
		cmd, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(fit)), ","), "[]"), spec.Name, room)
	return out
}

// checkReplace refuses an --out that holds an index unless --rebuild is
// given: msrag index replaces an index only when asked, as msrag eval does.
func checkReplace(c *cli.Context, cmd, out string) error {
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); err != nil || c.Bool("rebuild") {
		return nil
	}
	return usagef("%s: --out %s holds an index: give --rebuild to replace it, or another --out", cmd, out)
}
