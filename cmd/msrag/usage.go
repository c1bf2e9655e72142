package main

import (
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// commandPath returns the subcommand names that args (after the program
// name) start with, such as ["model", "fetch"], and the leaf command; nil
// when args name no command.
func commandPath(cmds []*cli.Command, args []string) ([]string, *cli.Command) {
	var path []string
	var leaf *cli.Command
	for _, a := range args {
		c := findCommand(cmds, a)
		if c == nil {
			break
		}
		path, leaf, cmds = append(path, c.Name), c, c.Subcommands
	}
	return path, leaf
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// reorderArgs moves the flags of a leaf command that follow its positional
// arguments in front of them, so that "msrag model fetch NAME --quiet" reads
// as "msrag model fetch --quiet NAME" (the flag parser stops at the first
// argument). A flag's value goes with it; "--" ends the flags.
func reorderArgs(cmds []*cli.Command, args []string) []string {
	if len(args) < 2 {
		return args
	}
	path, leaf := commandPath(cmds, args[1:])
	if leaf == nil || hasSubcommands(leaf) {
		return args
	}
	head := len(path) + 1
	var flags, pos []string
	rest := args[head:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := findFlag(leaf, name); f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out := append(append([]string(nil), args[:head]...), flags...)
	return append(out, pos...)
}

// hasSubcommands reports whether c has subcommands besides the help
// command the flag parser adds to each.
func hasSubcommands(c *cli.Command) bool {
	for _, s := range c.Subcommands {
		if s.Name != "help" {
			return true
		}
	}
	return false
}

func findFlag(c *cli.Command, name string) cli.Flag {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func isBoolFlag(f cli.Flag) bool {
	_, ok := f.(*cli.BoolFlag)
	return ok || f.Names()[0] == "help"
}

// prepareCommands makes every command report a flag that does not parse as
// a usage error (without printing its help) and check its required flags
// and flag values before its action runs. The flag parser's own check of
// required flags prints the whole help, so msrag checks them itself.
func prepareCommands(cmds []*cli.Command) {
	for _, c := range cmds {
		categorize(c.Flags)
		if hasSubcommands(c) && c.CustomHelpTemplate == "" {
			c.CustomHelpTemplate = groupHelpTemplate // msrag help data lists fetch
		}
		c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
			return usageError{flagMessage(c, err)}
		}
		var required []string
		for _, f := range c.Flags {
			if rf, ok := f.(cli.RequiredFlag); ok && rf.IsRequired() {
				required = append(required, f.Names()[0])
				reflect.ValueOf(f).Elem().FieldByName("Required").SetBool(false)
			}
		}
		if act := c.Action; act != nil && !c.SkipFlagParsing {
			c.Action = func(ctx *cli.Context) error {
				for _, name := range required {
					if !ctx.IsSet(name) {
						return usagef("--%s is required", name)
					}
				}
				if err := checkFlagValues(ctx); err != nil {
					return err
				}
				return act(ctx)
			}
		}
		prepareCommands(c.Subcommands)
	}
}

// groupHelpTemplate is the help of a command of subcommands (data, model)
// as both msrag help CMD and msrag CMD --help print it: urfave/cli's own
// lists the subcommands only in the second.
const groupHelpTemplate = `NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{.HelpName}} COMMAND [command options] [arguments...]{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

COMMANDS:{{range .VisibleCommands}}
   {{join .Names ", "}}{{"\t"}}{{.Usage}}{{end}}
`

// flagCategories group the flags that several commands share under a
// heading of their help; a command's own flags come first, without one.
func flagCategories() map[string]string {
	cats := map[string]string{}
	for _, g := range []struct {
		name  string
		flags []cli.Flag
	}{{"Model behind a server", remoteModelFlags()}, {"Device", deviceFlags()}, {"Scatter-gather search", phaseFlags()},
		{"Channels", channelFlagSet()}, {"Corpus columns", corpusFlags()}} {
		for _, f := range g.flags {
			cats[f.Names()[0]] = g.name
		}
	}
	return cats
}

// categorize sets the help category of each flag flagCategories names.
func categorize(flags []cli.Flag) {
	cats := flagCategories()
	for _, f := range flags {
		if cat, ok := cats[f.Names()[0]]; ok {
			if v := reflect.ValueOf(f).Elem().FieldByName("Category"); v.IsValid() && v.CanSet() {
				v.SetString(cat)
			}
		}
	}
}

// nonNegative are the numeric flags whose value must not be negative, on
// whichever command has them (0 means a default for all of them).
var nonNegative = []string{"request-timeout", "concurrency", "batch-texts", "max-tokens", "batch-tokens", "threads", "sessions",
	"workers", "block-lines", "device-id", "late-overlap", "stride"}

// checkFlagValues refuses a numeric flag value out of range, naming the flag
// and the value as given, before any work starts.
func checkFlagValues(c *cli.Context) error {
	for _, name := range nonNegative {
		if findFlag(c.Command, name) == nil || !c.IsSet(name) {
			continue
		}
		if name == "request-timeout" {
			if d := c.Duration(name); d < 0 {
				return usagef("--%s %v: must not be negative", name, d)
			}
			continue
		}
		if v := c.Int(name); v < 0 {
			return usagef("--%s %d: must not be negative", name, v)
		}
	}
	if findFlag(c.Command, "request-timeout") != nil && c.IsSet("request-timeout") {
		if d := c.Duration("request-timeout"); d > 0 && d < time.Millisecond {
			return usagef("--request-timeout %v: want at least 1ms (or 0 for the default of 2m)", d)
		}
	}
	return nil
}

var (
	reUndefined = regexp.MustCompile(`^flag provided but not defined: -+(\S+)$`)
	reInvalid   = regexp.MustCompile(`^invalid value "(.*)" for flag -+([^:]+): (.*)$`)
	reNeedsArg  = regexp.MustCompile(`^flag needs an argument: -+(\S+)$`)
)

// flagMessage rewrites the flag parser's messages in msrag's words; c, when
// known, is the command whose flags were parsed.
func flagMessage(c *cli.Command, err error) error {
	msg := err.Error()
	switch {
	case reUndefined.MatchString(msg):
		m := reUndefined.FindStringSubmatch(msg)
		if c != nil {
			if s := cli.SuggestFlag(c.Flags, m[1], false); s != "" && s != "--help" {
				return usagef("--%s: no such flag (did you mean %s?)", m[1], s)
			}
		}
		return usagef("--%s: no such flag", m[1])
	case reInvalid.MatchString(msg):
		m := reInvalid.FindStringSubmatch(msg)
		why := m[3]
		if strings.Contains(why, "parse error") || strings.Contains(why, "invalid syntax") {
			why = "not a valid value"
			var f cli.Flag
			if c != nil {
				f = findFlag(c, m[2])
			}
			switch f.(type) {
			case *cli.DurationFlag:
				why = "want a duration such as 30s or 2m"
			case *cli.IntFlag:
				why = "want a whole number"
			}
		}
		return usagef("--%s %q: %s", m[2], m[1], why)
	case reNeedsArg.MatchString(msg):
		m := reNeedsArg.FindStringSubmatch(msg)
		return usagef("--%s needs a value", m[1])
	}
	return err
}

// usageLine is the one line a usage error prints: the message and where the
// command's help is.
func usageLine(path []string, msg string) string {
	help := "msrag --help"
	if len(path) > 0 {
		help = "msrag " + strings.Join(path, " ") + " --help"
	}
	return "msrag: " + msg + " (see " + help + ")"
}
