package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/msrag/msrag/embed"
)

// Importing this package registers two kinds in package embed's registry,
// "openai" and "tei", which claim the model names that start with "openai:"
// and "tei:" (KIND:URL[#MODEL], see ParseModelSpec).
func init() {
	for _, k := range []API{OpenAI, TEI} {
		embed.Register(embed.Kind{Name: k.String(), Claims: claims(k), Open: openKind, Reopen: reopenKind})
	}
}

// OpenOptions are what opening a model behind a server takes beyond
// embed.Options: give one in embed.Options.Extra.
type OpenOptions struct {
	// Client holds the client's settings (API key, concurrency, batch
	// size, time limits, retries, encoding, log); its API, Endpoints and
	// Model come from the model's name or origin. A nil Log is
	// embed.Options.Log.
	Client Options
	// Encoding is how an OpenAI-compatible server is asked to send vectors,
	// "float" or "base64"; "" is base64 (as the official client asks) for
	// openai, float for tei, which has no other.
	Encoding string
	// Endpoints: when a model is opened by name, more base URLs of servers
	// of the same model (round-robin); when it is opened again from an
	// origin, the URLs to use instead of those recorded. The server may
	// move; the model may not.
	Endpoints []string
	// Tokenizer is the tokenizer.json that cuts the windows: required when
	// a model is opened by name; when it is opened again, "" is the path
	// recorded, and its sha256 must be the recorded one either way.
	Tokenizer string
	// The rest describe the model when it is opened by name (see
	// EmbedderOptions); an origin records them.
	ServerTokenizer            bool
	MaxTokens, Headroom        int
	QueryPrefix, PassagePrefix string
	InputType, NoNormalize     bool
}

// claims reports whether a model name is of kind k: "KIND:...".
func claims(k API) func(string) bool {
	return func(name string) bool { return strings.HasPrefix(name, k.String()+":") }
}

// clientOf returns oo's client options for servers of kind k, with o's log
// where they have none.
func clientOf(k API, oo OpenOptions, o embed.Options) (Options, error) {
	co := oo.Client
	co.API = k
	if co.Log == nil {
		co.Log = o.Log
	}
	switch {
	case oo.Encoding != "":
		e, err := ParseEncoding(oo.Encoding)
		if err != nil {
			return co, err
		}
		co.Encoding = e
	case k == OpenAI:
		co.Encoding = Base64
	}
	return co, nil
}

// openKind opens the model a KIND:URL[#MODEL] name names.
func openKind(ctx context.Context, name string, o embed.Options) (embed.Embedder, error) {
	ms, err := ParseModelSpec(name)
	if err != nil {
		return nil, err
	}
	oo, _ := embed.ExtraOf[OpenOptions](o)
	if oo.Tokenizer == "" {
		return nil, fmt.Errorf("remote: model %s: a model behind a server needs the tokenizer.json that cuts its windows (--tokenizer PATH, OpenOptions.Tokenizer): %w", Redact(name), ErrOptions)
	}
	co, err := clientOf(ms.API, oo, o)
	if err != nil {
		return nil, err
	}
	co.Model, co.Endpoints = ms.Model, JoinEndpoints(ms.Endpoint, oo.Endpoints)
	e, err := NewEmbedder(ctx, EmbedderOptions{
		Client: co, Tokenizer: oo.Tokenizer, ServerTokenizer: oo.ServerTokenizer, MaxTokens: oo.MaxTokens,
		Headroom: oo.Headroom, QueryPrefix: oo.QueryPrefix, PassagePrefix: oo.PassagePrefix,
		InputType: oo.InputType, NoNormalize: oo.NoNormalize,
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// reopenKind opens the model an origin records: the same API kind, model,
// role prefixes or input_type, maximum length and tokenizer, at the
// endpoints of OpenOptions when it has some.
func reopenKind(ctx context.Context, or embed.Origin, o embed.Options) (embed.Embedder, error) {
	r, err := ParseOrigin(or)
	if err != nil {
		return nil, err
	}
	oo, _ := embed.ExtraOf[OpenOptions](o)
	co, err := clientOf(r.API, oo, o)
	if err != nil {
		return nil, err
	}
	co.Model, co.Endpoints = r.Model, endpointsOf(oo.Endpoints, r)
	tok := oo.Tokenizer
	if tok == "" {
		tok = r.Tokenizer
	}
	e, err := NewEmbedder(ctx, EmbedderOptions{
		Client: co, Tokenizer: tok, ServerTokenizer: r.ServerTokenizer, MaxTokens: r.MaxTokens,
		Headroom:    recordedHeadroom(r.Headroom),
		QueryPrefix: r.QueryPrefix, PassagePrefix: r.PassagePrefix, InputType: r.InputType, Dims: r.Dims,
		NoNormalize: !r.Normalize,
	})
	if err != nil {
		if oo.Tokenizer == "" && errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("remote: the tokenizer the index recorded, %s, is not there (an index built before paths were recorded absolute keeps the path as typed); give it with --tokenizer (OpenOptions.Tokenizer): %w",
				r.Tokenizer, err)
		}
		return nil, err
	}
	return e, nil
}

// recordedHeadroom turns a recorded headroom into the option that gives it
// again: 0 (none) is a negative option, since the option's 0 is the default.
func recordedHeadroom(h int) int {
	if h == 0 {
		return -1
	}
	return h
}
