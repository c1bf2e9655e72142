package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/remote/remotetest"
	"github.com/msrag/msrag/tokenizer"
)

// hostileCases are the faults of a server and what msrag says of each: the
// fault starts after the first request (the probe), so it hits the build.
var hostileCases = []struct {
	fault remotetest.Fault
	want  string
}{
	{remotetest.Fault{Kind: remotetest.ZeroVectors, After: 1}, "all 16 values are zero: malformed response"},
	{remotetest.Fault{Kind: remotetest.NaN, After: 1}, "value 0 is NaN: malformed response"},
	{remotetest.Fault{Kind: remotetest.WrongCount, After: 1}, "vectors for"},
	{remotetest.Fault{Kind: remotetest.ChangingDims, After: 1}, "vector of 17 dims, want 16"},
	{remotetest.Fault{Kind: remotetest.HugeBody, After: 1}, "response body over"},
	{remotetest.Fault{Kind: remotetest.HugeError, After: 1, Status: 500}, "status 500 internal server error: the server is overloaded xxx"},
	{remotetest.Fault{Kind: remotetest.SlowHeaders, After: 1}, "no answer within the timeout of 1s"},
	{remotetest.Fault{Kind: remotetest.SlowBody, After: 1}, "no answer within the timeout of 1s"},
	{remotetest.Fault{Kind: remotetest.ResetMidBody, After: 1}, "reading the response"},
	{remotetest.Fault{Kind: remotetest.Status, After: 1, Status: 503, Message: "down for maintenance"}, "status 503 service unavailable: down for maintenance"},
}

// runLimited runs msrag in a process of its own and kills it after limit.
func runLimited(t *testing.T, limit time.Duration, args ...string) (code int, stderr string) {
	t.Helper()
	cmd, errb := msragProcess(t, args...)
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("msrag %s still running after %v", strings.Join(args, " "), limit)
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}

// TestHostileServerCLI builds an index (real processes, each within a
// minute) through a server in every fault mode: each stops with exit 1 and a
// message naming the batch and the fault, and leaves nothing; then searches
// through one.
func TestHostileServerCLI(t *testing.T) {
	dir := t.TempDir()
	tokPath := testfiles.BERTUncased(t, dir)
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	corpusPath := writeCorpus(t, dir)
	for _, tc := range hostileCases {
		t.Run("index/"+tc.fault.Kind.String(), func(t *testing.T) {
			srv := newCLIServer(t, tok)
			srv.Config.Embed = nil // remotetest's vectors, 16 dims
			srv.SetFault(tc.fault)
			work := t.TempDir()
			out := filepath.Join(work, "idx")
			code, stderr := runLimited(t, time.Minute, "index", "--corpus", corpusPath, "--out", out, "--windows", "4,8",
				"--model", "openai:"+srv.OpenAIURL(), "--tokenizer", tokPath, "--request-timeout", "1s", "--retries", "-1", "--quiet")
			if code != exitFailure || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "at "+srv.OpenAIURL()+"/embeddings") {
				t.Fatalf("exit %d, stderr %q: want exit 1 with %q naming the endpoint", code, stderr, tc.want)
			}
			if len(stderr) > 2000 {
				t.Errorf("stderr of %d bytes", len(stderr))
			}
			if entries, _ := os.ReadDir(work); len(entries) != 0 {
				t.Errorf("left %d entries beside the index", len(entries))
			}
		})
	}

	good := newCLIServer(t, tok)
	idx := filepath.Join(dir, "idx")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", idx, "--windows", "4,8",
		"--model", "openai:"+good.OpenAIURL(), "--tokenizer", tokPath, "--quiet"); code != exitOK {
		t.Fatalf("index: %s", stderr)
	}
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee drinking and heart disease\n"), 0o644)
	for _, k := range []remotetest.FaultKind{remotetest.ZeroVectors, remotetest.HugeBody} {
		t.Run("search/"+k.String(), func(t *testing.T) {
			bad := newCLIServer(t, tok)
			bad.SetFault(remotetest.Fault{Kind: k, After: 1})
			outFile := filepath.Join(t.TempDir(), "run.trec")
			code, stderr := runLimited(t, time.Minute, "search", "--index", idx, "--queries", queries, "--endpoints", bad.OpenAIURL(),
				"--retries", "-1", "--out", outFile)
			if code != exitFailure || !strings.Contains(stderr, "malformed response") {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if _, err := os.Stat(outFile); err == nil {
				t.Error("a failed search wrote its output")
			}
		})
	}
}

// TestServerURLSecrets checks that a secret in a server URL's query string
// never reaches the terminal, and that credentials in a URL are refused for
// $MSRAG_API_KEY.
func TestServerURLSecrets(t *testing.T) {
	dir := t.TempDir()
	tokPath := testfiles.BERTUncased(t, dir)
	corpusPath := writeCorpus(t, dir)
	for _, tc := range []struct{ model, want string }{
		{"openai:http://127.0.0.1:9/v1?api_key=hunter2", "a base URL takes no query or fragment"},
		{"openai:http://user:hunter2@127.0.0.1:9/v1", "give an API key in $MSRAG_API_KEY"},
		{"tei:http://127.0.0.1:9?token=hunter2", "a base URL takes no query"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "idx"),
				"--model", tc.model, "--tokenizer", tokPath)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(stdout+stderr, "hunter2") {
				t.Fatalf("exit %d, stderr %q: want exit 2 with %q and no secret", code, stderr, tc.want)
			}
		})
	}
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := newCLIServer(t, tok)
	idx := filepath.Join(dir, "good")
	if code, _, stderr := runCLI(t, "", "index", "--corpus", corpusPath, "--out", idx, "--windows", "4",
		"--model", "openai:"+srv.OpenAIURL(), "--tokenizer", tokPath, "--quiet"); code != exitOK {
		t.Fatalf("index: %s", stderr)
	}
	queries := filepath.Join(dir, "q.tsv")
	os.WriteFile(queries, []byte("q1\tcoffee\n"), 0o644)
	code, _, stderr := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--endpoints", srv.OpenAIURL()+"?key=hunter2")
	if code != exitUsage || strings.Contains(stderr, "hunter2") || !strings.Contains(stderr, "?key=xxxxx") {
		t.Errorf("search --endpoints with a secret: exit %d, stderr %q; want exit 2, the secret masked", code, stderr)
	}
	// A setting the API kind lacks is a usage error too.
	code, _, stderr = runCLI(t, "", "index", "--corpus", corpusPath, "--out", filepath.Join(dir, "tei"), "--windows", "4",
		"--model", "tei:"+srv.URL, "--tokenizer", tokPath, "--input-type")
	if code != exitUsage || !strings.Contains(stderr, "no input_type") {
		t.Errorf("tei with --input-type: exit %d, stderr %q", code, stderr)
	}
}
