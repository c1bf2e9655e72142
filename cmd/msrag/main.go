// Command msrag indexes a corpus at several chunk sizes and searches it with
// Reciprocal Rank Fusion. Run "msrag help" for the subcommands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	_ "github.com/msrag/msrag/channels" // every built-in kind of channel
	"github.com/msrag/msrag/chunk"
	_ "github.com/msrag/msrag/embedders" // every built-in embedder kind
	"github.com/msrag/msrag/experiment"
	"github.com/msrag/msrag/internal/safefile"
	"github.com/msrag/msrag/late"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed
	exitUsage   = 2 // the command line was wrong
)

// commands holds every subcommand; each cmd_<name>.go adds its own in an init
// function, so subcommands live in one file each.
var commands []*cli.Command

func register(c *cli.Command) { commands = append(commands, c) }

// usageError marks an error in the command line (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// asUsage marks errors that reject the configuration itself (a window the
// model cannot take, windows given twice, cross-validation groups that
// group nothing, a fusion model of channels left out, an MTEB task name
// refused, an output directory that is not an index) as usage errors; they
// are found before any document is read or query embedded.
func asUsage(err error) error {
	if errors.Is(err, chunk.ErrTooLong) || errors.Is(err, chunk.ErrConfig) || errors.Is(err, late.ErrConfig) || errors.Is(err, experiment.ErrCVGroups) ||
		errors.Is(err, experiment.ErrLearnedChannels) || errors.Is(err, experiment.ErrTask) || errors.Is(err, experiment.ErrTaskName) ||
		errors.Is(err, safefile.ErrNotReplaceable) {
		return usageError{err}
	}
	return err
}

// usagef returns a usage error (exit code 2) with a formatted message.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func init() {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print msrag's version: release, source revision and Go toolchain"}
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprintf(c.App.Writer, "msrag %s (%s)\n", c.App.Version, msrag.CurrentBuild().GoVersion)
	}
}

// prepareOnce wraps the commands' actions once per process.
var prepareOnce sync.Once

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	sort.Slice(commands, func(i, j int) bool { return commands[i].Name < commands[j].Name })
	prepareOnce.Do(func() { prepareCommands(commands) })
	return &cli.App{
		Name:  "msrag",
		Usage: "multi-scale retrieval: index a corpus at several chunk sizes, search, fuse with RRF, evaluate",
		Description: "msrag tokenizes each document once with the embedding model's tokenizer, cuts it into\n" +
			"windows of several sizes (default 100, 200, 500 tokens), embeds the windows with an ONNX\n" +
			"model, keeps one FAISS index per size, and fuses the per-size chunk rankings into one\n" +
			"document ranking with Reciprocal Rank Fusion.",
		Version:         msrag.CurrentBuild().String(),
		Commands:        commands,
		Reader:          stdin,
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: false,
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{flagMessage(nil, err)}
		},
		ExitErrHandler: func(*cli.Context, error) {}, // main decides the exit code
	}
}

// run executes the command line and returns the process exit code. Flags
// after a command's arguments are moved in front of them. A usage error is
// one line naming the command's help, exit code 2.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	args = reorderArgs(commands, args)
	err := app.RunContext(ctx, args)
	if err == nil {
		return exitOK
	}
	msg := strings.ReplaceAll(err.Error(), "msrag: ", "")
	var ue usageError
	if errors.As(err, &ue) || isFlagError(err) {
		var path []string
		if len(args) > 1 {
			path, _ = commandPath(commands, args[1:])
		}
		fmt.Fprintln(stderr, usageLine(path, strings.Join(strings.Fields(msg), " ")))
		return exitUsage
	}
	fmt.Fprintln(stderr, "msrag: "+msg)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		fmt.Fprintln(stderr, "msrag: interrupted")
	}
	return exitFailure
}

// isFlagError reports whether err came from the flag parser (unknown or malformed flag,
// missing required flag), which urfave/cli does not always pass through OnUsageError.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"flag provided but not defined", "Required flag", "invalid value", "flag needs an argument", "No help topic"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := startProfile(os.Stderr)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}
