package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/chunk"
)

// offFlags are the flags that leave a kind built by default out, by the
// kind's name: the command line's own, older than --channel.
var offFlags = map[string]string{"no-lexical": "lexical"}

// onFlags are flags kept for older command lines that ask for a kind built
// by default anyway.
var onFlags = map[string]string{"lexical": "lexical"}

// channelFlagSet are the flags of the kinds of channel a build makes
// (index and eval): --channel NAME[:KEY=VALUE,...], the flags that leave a
// default kind out, and each registered kind's parameters that have a
// flag of their own (channel.Flag.Alias: --factory, --bm25-k1, ...).
func channelFlagSet() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "channel", Usage: "a kind of channel to build, by its registered name, with its parameters: NAME or NAME:KEY=VALUE,... " +
			"(repeatable; this msrag registers " + kindsHelp() + "; kinds are packages a program imports). " +
			"By default a build makes the kinds built by default (with a model, its vectors' and the texts'; without, the texts')"},
	}
	for _, name := range slices.Sorted(mapKeys(offFlags)) {
		flags = append(flags, &cli.BoolFlag{Name: name, Usage: "build no " + offFlags[name] + " channels"})
	}
	for _, name := range slices.Sorted(mapKeys(onFlags)) {
		flags = append(flags, &cli.BoolFlag{Name: name, Usage: "build " + onFlags[name] + " channels (the default; kept for older command lines)"})
	}
	for _, k := range channel.Kinds() {
		for _, f := range k.Params().Flags() {
			if f.Alias != "" {
				flags = append(flags, &cli.StringFlag{Name: f.Alias, Value: f.Default, Usage: f.Usage + " (--channel " + k.Name() + ":" + f.Key + "=...)"})
			}
		}
	}
	return flags
}

// kindsHelp lists the registered kinds with their keys.
func kindsHelp() string {
	var out []string
	for _, k := range channel.Kinds() {
		var keys []string
		for _, f := range k.Params().Flags() {
			keys = append(keys, f.Key+"="+f.Default)
		}
		out = append(out, k.Name()+" ("+strings.Join(keys, ",")+")")
	}
	return strings.Join(out, ", ")
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// channelFlags maps the channel flags to the build's kinds of channel,
// each with its parameters read by its flag table: the default kinds (less
// those an off flag leaves out) and those --channel names. An unknown
// kind, key or value is a usage error naming it.
func channelFlags(c *cli.Context, cmd string, model bool) ([]channel.Params, error) {
	given := map[channel.Kind]channel.Settings{}
	var order []channel.Kind
	for _, arg := range channelArgs(c.StringSlice("channel")) {
		k, s, err := parseChannelFlag(arg)
		if err != nil {
			return nil, usagef("%s: --channel %q: %v", cmd, arg, err)
		}
		if _, dup := given[k]; dup {
			return nil, usagef("%s: --channel %s is given twice", cmd, k.Name())
		}
		given[k], order = s, append(order, k)
	}
	built, err := builtKinds(c, cmd, model, order)
	if err != nil {
		return nil, err
	}
	if len(built) == 0 {
		return nil, usagef("%s: the build makes no channels: %s leaves nothing to build (add --channel NAME)", cmd, offNames(c))
	}
	var out []channel.Params
	for _, k := range built {
		s, err := aliasSettings(c, cmd, k, given[k])
		if err != nil {
			return nil, err
		}
		p, err := k.Params().Parse(s)
		if err != nil {
			return nil, paramUsage(c, cmd, k, err)
		}
		out = append(out, p)
	}
	for _, k := range channel.Kinds() {
		if slices.Contains(built, k) {
			continue
		}
		for _, f := range k.Params().Flags() {
			if f.Alias != "" && c.IsSet(f.Alias) {
				return nil, usagef("%s: --%s is for %s channels, which this build leaves out", cmd, f.Alias, k.Name())
			}
		}
	}
	return out, nil
}

// parseChannelFlag reads NAME[:KEY=VALUE,...].
func parseChannelFlag(arg string) (channel.Kind, channel.Settings, error) {
	name, params, _ := strings.Cut(arg, ":")
	k, ok := channel.Lookup(strings.TrimSpace(name))
	if !ok {
		return nil, nil, fmt.Errorf("no such kind of channel (this msrag registers %s)", strings.Join(channel.Names(), ", "))
	}
	s, err := channel.ParseSettings(params)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", k.Name(), err)
	}
	return k, s, nil
}

// builtKinds are the kinds the build makes, in layout order: the default
// ones the build can make (those of the model's vectors only with a
// model) unless an off flag leaves them out, and those --channel names.
func builtKinds(c *cli.Context, cmd string, model bool, named []channel.Kind) ([]channel.Kind, error) {
	off, err := offKinds(c, cmd)
	if err != nil {
		return nil, err
	}
	var out []channel.Kind
	for _, k := range channel.Kinds() {
		def := byDefault(k, model)
		switch {
		case slices.Contains(named, k) && off[k.Name()] != "":
			return nil, usagef("%s: --channel %s and --%s both given", cmd, k.Name(), off[k.Name()])
		case slices.Contains(named, k) && !model && k.Needs().Has(channel.ChunkVectors):
			return nil, usagef("%s: --channel %s: its channels search the model's vectors, and --model none has none", cmd, k.Name())
		case slices.Contains(named, k) || def && off[k.Name()] == "":
			out = append(out, k)
		}
	}
	return out, nil
}

// offKinds are the kinds the flags leave out, each with the flag that does
// ("no-lexical", "lexical=false").
func offKinds(c *cli.Context, cmd string) (map[string]string, error) {
	off := map[string]string{}
	for flag, name := range offFlags {
		if c.Bool(flag) {
			off[name] = flag
		}
	}
	for flag, name := range onFlags {
		switch {
		case c.IsSet(flag) && c.Bool(flag) && off[name] != "":
			return nil, usagef("%s: --%s and --%s both given", cmd, flag, off[name])
		case c.IsSet(flag) && !c.Bool(flag):
			off[name] = flag + "=false"
		}
	}
	return off, nil
}

// byDefault reports whether the command line builds k unless told
// otherwise: every kind a build makes by default with a model or without,
// but one of the model's vectors without a model.
func byDefault(k channel.Kind, model bool) bool {
	d := k.Traits().Default
	return d.For(model) || d.For(!model) && (model || !k.Needs().Has(channel.ChunkVectors))
}

// aliasSettings adds to s the kind's parameters given by flags of their
// own (--bm25-k1); a key given both ways is a usage error.
func aliasSettings(c *cli.Context, cmd string, k channel.Kind, s channel.Settings) (channel.Settings, error) {
	s = slices.Clone(s)
	for _, f := range k.Params().Flags() {
		if f.Alias == "" || !c.IsSet(f.Alias) {
			continue
		}
		if _, dup := s.Get(f.Key); dup {
			return nil, usagef("%s: --%s and --channel %s:%s=... both given", cmd, f.Alias, k.Name(), f.Key)
		}
		s = append(s, channel.Setting{Key: f.Key, Value: c.String(f.Alias)})
	}
	return s, nil
}

// paramUsage is the usage error for a kind's parameter: named by its own
// flag where it was given by one, else by --channel and its key.
func paramUsage(c *cli.Context, cmd string, k channel.Kind, err error) error {
	var pe *channel.ParamError
	if errors.As(err, &pe) {
		for _, f := range k.Params().Flags() {
			if f.Key == pe.Key && f.Alias != "" && c.IsSet(f.Alias) {
				return usagef("%s: --%s %v", cmd, f.Alias, pe.Err)
			}
		}
	}
	return usagef("%s: --channel %s: %v", cmd, k.Name(), err)
}

// checkModelChannels fails, a usage error, unless the parameters of every
// kind suit the model's vectors (channel.ModelChecker: a FAISS factory's
// sub-quantizers divide their dims).
func checkModelChannels(cmd string, cs []channel.Params, dims int) error {
	for _, p := range cs {
		if mc, ok := p.(channel.ModelChecker); ok {
			if err := mc.CheckModel(dims); err != nil {
				return usagef("%s: %s channels: %w (the model's vectors have %d dims)", cmd, p.Kind().Name(), err, dims)
			}
		}
	}
	return nil
}

// offNames names the flags given that leave kinds out: "--no-lexical".
func offNames(c *cli.Context) string {
	var out []string
	for _, flag := range slices.Sorted(mapKeys(offFlags)) {
		if c.Bool(flag) {
			out = append(out, "--"+flag)
		}
	}
	for _, flag := range slices.Sorted(mapKeys(onFlags)) {
		if c.IsSet(flag) && !c.Bool(flag) {
			out = append(out, "--"+flag+"=false")
		}
	}
	return strings.Join(out, " and ")
}

// channelArgs puts back together the --channel arguments that the flag
// package cut at their commas: a piece without ":" that is no kind's name
// continues the parameters of the one before ("min=2", or the "Flat" of
// factory=IVF1024,Flat; a kind's name holds no "=").
func channelArgs(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		_, kind := channel.Lookup(strings.TrimSpace(p))
		if len(out) > 0 && !kind && !strings.Contains(p, ":") && strings.Contains(out[len(out)-1], ":") {
			out[len(out)-1] += "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}

// kindsFusionHelp lists the registered kinds as fusion rules name them:
// each kind's group (windows=NAME) and its channels' names.
func kindsFusionHelp() string {
	var b strings.Builder
	b.WriteString("  kinds (windows=KIND: its channels):")
	w := chunk.Window{Size: 100}
	for _, k := range channel.Kinds() {
		t := k.Traits()
		names := t.ChannelName(w) + ", ..."
		if t.WholeDoc {
			names += ", " + t.ChannelName(chunk.Window{})
		}
		fmt.Fprintf(&b, "\n    %-18s %s", k.Name(), names)
	}
	return b.String()
}
