package remote

import (
	"fmt"
	"slices"
	"strings"
)

// ModelSpec is a model behind a server as the command line names it:
//
//	openai:http://127.0.0.1:8000/v1#multilingual-e5-small-q4
//	tei:http://127.0.0.1:8080
//
// KIND:BASE-URL[#MODEL]: the API kind ("openai" or "tei"), the base URL of
// one server, and optionally the model to ask for (sent as "model" to an
// OpenAI-compatible server; with TEI, the model_id GET /info must report).
type ModelSpec struct {
	API      API
	Endpoint string
	Model    string
}

// IsModelSpec reports whether s names a model behind a server: it starts
// with "openai:" or "tei:" followed by an http or https URL.
func IsModelSpec(s string) bool {
	kind, rest, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	if _, err := ParseAPI(kind); err != nil || strings.TrimSpace(kind) != kind {
		return false
	}
	return strings.HasPrefix(rest, "http://") || strings.HasPrefix(rest, "https://")
}

// ParseModelSpec parses KIND:BASE-URL[#MODEL].
func ParseModelSpec(s string) (ModelSpec, error) {
	if !IsModelSpec(s) {
		return ModelSpec{}, fmt.Errorf("remote: model %q: want openai:URL[#MODEL] or tei:URL[#MODEL]: %w", Redact(s), ErrOptions)
	}
	kind, rest, _ := strings.Cut(s, ":")
	k, _ := ParseAPI(kind)
	url, model, _ := strings.Cut(rest, "#")
	if _, err := parseEndpoint(url, k); err != nil {
		return ModelSpec{}, err
	}
	return ModelSpec{API: k, Endpoint: url, Model: model}, nil
}

// Served describes the model behind an Embedder as an index records it.
type Served struct {
	API   API
	Model string // as the server reports it
	// Endpoints are the base URLs, credentials removed.
	Endpoints []string
	// InputType: the server adds the role prefixes itself (EmbedderOptions.InputType).
	InputType bool
	// Tokenizer is the absolute path of the tokenizer.json given;
	// ServerTokenizer says it is the server's own
	// (EmbedderOptions.ServerTokenizer).
	Tokenizer       string
	ServerTokenizer bool
	// MaxTokens is the server's maximum and Headroom the tokens kept under
	// it (EmbedderOptions.MaxTokens and Headroom, as resolved).
	MaxTokens, Headroom int
}

// Served describes the served model.
func (e *Embedder) Served() Served {
	s := Served{API: e.c.opts.API, Model: e.model, InputType: e.opts.InputType,
		Tokenizer: e.opts.Tokenizer, ServerTokenizer: e.opts.ServerTokenizer, MaxTokens: e.serverMax, Headroom: e.headroom}
	for _, ep := range e.c.endpoints {
		s.Endpoints = append(s.Endpoints, ep.base)
	}
	return s
}

// JoinEndpoints returns first followed by each of more not already listed:
// a model spec's URL and the rest of a fleet.
func JoinEndpoints(first string, more []string) []string {
	out := []string{first}
	for _, m := range more {
		if m = strings.TrimSpace(m); m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}
