package remote

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/msrag/msrag/embed"
)

// Recorded is what an index records of a model behind a server, in its
// origin: how the model was served and described (Params, its identity) and
// how it was reached (Access: endpoints and tokenizer path).
type Recorded struct {
	Served
	// QueryPrefix and PassagePrefix are the model's role prefixes, Dims the
	// vector size and Normalize whether vectors were scaled to unit length.
	QueryPrefix, PassagePrefix string
	Dims                       int
	Normalize                  bool
}

// originParams are an origin's Params. Format 2 manifests recorded the same
// fields in a "remote" section; package indexfile converts it under these
// JSON names.
type originParams struct {
	Model           string `json:"model"`
	InputType       bool   `json:"input_type"`
	TokenizerOrigin string `json:"tokenizer_origin"`
	ServerMaxTokens int    `json:"server_max_tokens"`
	Headroom        int    `json:"headroom"`
	QueryPrefix     string `json:"query_prefix"`
	PassagePrefix   string `json:"passage_prefix"`
	Dims            int    `json:"dims"`
	Normalize       bool   `json:"normalize"`
}

// originAccess are an origin's Access: no part of the model's identity.
type originAccess struct {
	Endpoints []string `json:"endpoints"`
	Tokenizer string   `json:"tokenizer"`
}

// Origin says how to open the model again (embed.Originer): its kind
// ("openai" or "tei"), what the server serves, and where it was reached.
func (e *Embedder) Origin() embed.Origin {
	sv := e.Served()
	p := originParams{Model: sv.Model, InputType: sv.InputType, TokenizerOrigin: "other",
		ServerMaxTokens: sv.MaxTokens, Headroom: sv.Headroom, QueryPrefix: e.spec.QueryPrefix,
		PassagePrefix: e.spec.PassagePrefix, Dims: e.spec.Dims, Normalize: e.spec.Normalize}
	if sv.ServerTokenizer {
		p.TokenizerOrigin = "server"
	}
	params, _ := json.Marshal(p) // strings, ints and bools always encode
	access, _ := json.Marshal(originAccess{Endpoints: sv.Endpoints, Tokenizer: sv.Tokenizer})
	return embed.Origin{Kind: sv.API.String(), Params: string(params), Access: string(access)}
}

// ParseOrigin reads the origin of a model behind a server.
func ParseOrigin(o embed.Origin) (Recorded, error) {
	kind, err := ParseAPI(o.Kind)
	if err != nil {
		return Recorded{}, err
	}
	var p originParams
	var a originAccess
	if err := json.Unmarshal([]byte(o.Params), &p); err != nil {
		return Recorded{}, fmt.Errorf("remote: origin parameters %s: %w", o.Params, err)
	}
	if o.Access != "" {
		if err := json.Unmarshal([]byte(o.Access), &a); err != nil {
			return Recorded{}, fmt.Errorf("remote: origin access %s: %w", o.Access, err)
		}
	}
	return Recorded{
		Served: Served{API: kind, Model: p.Model, Endpoints: a.Endpoints, InputType: p.InputType,
			Tokenizer: a.Tokenizer, ServerTokenizer: p.TokenizerOrigin == "server",
			MaxTokens: p.ServerMaxTokens, Headroom: p.Headroom},
		QueryPrefix: p.QueryPrefix, PassagePrefix: p.PassagePrefix, Dims: p.Dims, Normalize: p.Normalize,
	}, nil
}

// String describes the recorded model for messages: kind, model, prefixes.
func (r Recorded) String() string {
	return fmt.Sprintf("%s model %q with prefixes %q/%q (input_type %v), %d tokens (%d of headroom)",
		r.API, r.Model, r.QueryPrefix, r.PassagePrefix, r.InputType, r.MaxTokens, r.Headroom)
}

// endpointsOf returns the endpoints to reach a recorded model at: those
// given, else those recorded.
func endpointsOf(given []string, r Recorded) []string {
	if len(given) > 0 {
		return given
	}
	var out []string
	for _, e := range r.Endpoints {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

var _ embed.Originer = (*Embedder)(nil)
