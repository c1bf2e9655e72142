package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUsageErrorsAreOneLine runs a bad command line of every command: each
// exits 2 with one line that names what is wrong and where the command's
// help is, and no help text; nothing is written.
func TestUsageErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	srv := "openai:http://127.0.0.1:9/v1"
	for _, tc := range []struct {
		args []string
		want string
		help string
	}{
		{[]string{"search", "--bogus"}, "--bogus: no such flag", "msrag search --help"},
		{[]string{"search", "--index", "x"}, "--queries is required", "msrag search --help"},
		{[]string{"search", "--index", "x", "--queries", "q", "--k", "ten"}, `--k "ten": want a whole number`, "msrag search --help"},
		{[]string{"search", "--index", "x", "--queries", "q", "--request-timeout", "-5s"}, "--request-timeout -5s: must not be negative", "msrag search --help"},
		{[]string{"search", "--index", "x", "--queries", "q", "--concurrency", "-1"}, "--concurrency -1: must not be negative", "msrag search --help"},
		{[]string{"search", "--index", "x", "--queries", "q", "--request-timeout", "soon"}, `--request-timeout "soon": want a duration such as 30s or 2m`, "msrag search --help"},
		{[]string{"search", "--index", "x", "--queries"}, "--queries needs a value", "msrag search --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--model", srv, "--tokenizer", "t", "--request-timeout", "-5s"}, "--request-timeout -5s: must not be negative", "msrag index --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--batch-texts", "-2"}, "--batch-texts -2: must not be negative", "msrag index --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--max-tokens", "-2"}, "--max-tokens -2: must not be negative", "msrag index --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--workers", "-1"}, "--workers -1: must not be negative", "msrag index --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--late-overlap", "-1"}, "--late-overlap -1: must not be negative", "msrag index --help"},
		{[]string{"index", "--out", out}, "--corpus is required", "msrag index --help"},
		{[]string{"eval", "--dataset", "d", "--out", out, "--threads", "-4"}, "--threads -4: must not be negative", "msrag eval --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--stride", "-1"}, "--stride -1: must not be negative", "msrag index --help"},
		{[]string{"eval", "--dataset", "d", "--out", out, "--stride", "-1"}, "--stride -1: must not be negative", "msrag eval --help"},
		{[]string{"eval", "--dataset", "d", "--out", out, "--stride", "99999999999999999999"}, "--stride", "msrag eval --help"},
		{[]string{"index", "--corpus", "c", "--out", out, "--sessions", "-2"}, "--sessions -2: must not be negative", "msrag index --help"},
		{[]string{"embed", "--sessions", "-1"}, "--sessions -1: must not be negative", "msrag embed --help"},
		{[]string{"eval", "--nope"}, "--nope: no such flag", "msrag eval --help"},
		{[]string{"embed", "--model", srv, "--tokenizer", "t", "--request-timeout", "-1ms"}, "--request-timeout -1ms: must not be negative", "msrag embed --help"},
		{[]string{"embed", "--batch-tokens", "-5"}, "--batch-tokens -5: must not be negative", "msrag embed --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i"}, "--out is required", "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", out, "--folds", "1"}, "--folds must be at least 2", "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", out, "--loss-aversion", "-1"}, "--loss-aversion -1: want a finite number, 0 or more", "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", out, "--loss-aversion", "NaN"}, "--loss-aversion NaN: want a finite number, 0 or more", "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", out, "--loss-aversion", "Inf"}, "--loss-aversion +Inf: want a finite number, 0 or more", "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", out, "--loss-aversion", ""}, `--loss-aversion "": not a valid value`, "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", out, "--loss-aversion", "1e400"}, `--loss-aversion "1e400": value out of range`, "msrag tune --help"},
		{[]string{"tune", "--dataset", "d", "--index", "i", "--out", ""}, "tune: --out is empty", "msrag tune --help"},
		{[]string{"embed", "--out", ""}, "embed: --out is empty", "msrag embed --help"},
		{[]string{"tokenize", "--bogus"}, "--bogus: no such flag", "msrag tokenize --help"},
		{[]string{"bench", "--bogus"}, "--bogus: no such flag", "msrag bench --help"},
		{[]string{"model", "fetch", "--bogus"}, "--bogus: no such flag", "msrag model fetch --help"},
		{[]string{"data", "fetch", "--bogus"}, "--bogus: no such flag", "msrag data fetch --help"},
		{[]string{"compare", "--bogus"}, "--bogus: no such flag", "msrag compare --help"},
		{[]string{"--bogus"}, "--bogus: no such flag", "msrag --help"},
		{[]string{"search", "--index", "x", "--queries", "q", "--", "stray"}, "search: unexpected arguments [stray]", "msrag search --help"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "(see "+tc.help+")") {
				t.Fatalf("exit %d, stderr %q: want exit 2 and one line with %q and %q", code, stderr, tc.want, tc.help)
			}
			if strings.Contains(stdout+stderr, "USAGE:") || !strings.HasPrefix(stderr, "msrag: ") {
				t.Errorf("help printed or no prefix: stdout %q stderr %q", stdout, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
		})
	}
}

// TestFlagsAfterArguments checks that a leaf command's flags may follow its
// arguments, values included, and that "--" keeps what follows as arguments.
func TestFlagsAfterArguments(t *testing.T) {
	prepareOnce.Do(func() { prepareCommands(commands) })
	for _, tc := range []struct{ in, want []string }{
		{[]string{"msrag", "model", "fetch", "e5", "--force", "--quiet"}, []string{"msrag", "model", "fetch", "--force", "--quiet", "e5"}},
		{[]string{"msrag", "search", "x", "--index", "i", "--k=3"}, []string{"msrag", "search", "--index", "i", "--k=3", "x"}},
		{[]string{"msrag", "search", "--", "--index"}, []string{"msrag", "search", "--", "--index"}},
		{[]string{"msrag", "data", "fetch", "scifact", "--dir", "d"}, []string{"msrag", "data", "fetch", "--dir", "d", "scifact"}},
		{[]string{"msrag", "help", "search"}, []string{"msrag", "help", "search"}},
		{[]string{"msrag", "model"}, []string{"msrag", "model"}},
	} {
		if got := reorderArgs(commands, tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("reorderArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	code, stdout, stderr := runCLI(t, "", "model", "fetch", "e5-small-v2", "--check")
	if code == exitUsage || !strings.Contains(stdout, "e5-small-v2") {
		t.Errorf("model fetch NAME --check: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
