package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func runCLI(t testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"msrag"}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "", "--help")
	if code != exitOK || !strings.Contains(out, "multi-scale retrieval") {
		t.Fatalf("help: code %d, output %q", code, out)
	}
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	code, _, errOut := runCLI(t, "", "--no-such-flag")
	if code != exitUsage {
		t.Fatalf("unknown flag: code %d, want %d (stderr %q)", code, exitUsage, errOut)
	}
}
