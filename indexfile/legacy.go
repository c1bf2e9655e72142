package indexfile

import (
	"encoding/json"
	"strings"
)

// legacyRemote is format 2's "remote" section of a model behind an embedding
// server. Its fields become the Origin of kind Kind ("openai" or "tei"):
// Endpoints (split at commas) and Tokenizer its Access, the rest its Params,
// under the same JSON names (package remote reads them there).
type legacyRemote struct {
	Kind            string `json:"kind"`
	Model           string `json:"model"`
	Endpoints       string `json:"endpoints"`
	InputType       bool   `json:"input_type,omitempty"`
	Tokenizer       string `json:"tokenizer"`
	TokenizerOrigin string `json:"tokenizer_origin"`
	ServerMaxTokens int    `json:"server_max_tokens"`
	Headroom        int    `json:"headroom"`
}

// origin converts the section of model m: the prefixes, the vector size and
// the normalisation, which format 2 kept in the model alone, join the
// parameters, so that the origin opens the model again by itself.
func (r legacyRemote) origin(m ModelInfo) (Origin, error) {
	params, err := MakeParams(struct {
		Model           string `json:"model"`
		InputType       bool   `json:"input_type"`
		TokenizerOrigin string `json:"tokenizer_origin"`
		ServerMaxTokens int    `json:"server_max_tokens"`
		Headroom        int    `json:"headroom"`
		QueryPrefix     string `json:"query_prefix"`
		PassagePrefix   string `json:"passage_prefix"`
		Dims            int    `json:"dims"`
		Normalize       bool   `json:"normalize"`
	}{r.Model, r.InputType, r.TokenizerOrigin, r.ServerMaxTokens, r.Headroom, m.QueryPrefix, m.PassagePrefix, m.Dims, m.Normalize})
	if err != nil {
		return Origin{}, err
	}
	var endpoints []string
	for _, e := range strings.Split(r.Endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	access, err := MakeParams(struct {
		Endpoints []string `json:"endpoints"`
		Tokenizer string   `json:"tokenizer"`
	}{endpoints, r.Tokenizer})
	if err != nil {
		return Origin{}, err
	}
	return Origin{Kind: r.Kind, Params: params, Access: access}, nil
}

// UnmarshalJSON reads a model of any format, converting format 2's "remote"
// section into the Origin.
func (m *ModelInfo) UnmarshalJSON(b []byte) error {
	type plain ModelInfo
	var v struct {
		plain
		Remote *legacyRemote `json:"remote"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = ModelInfo(v.plain)
	if r := v.Remote; r != nil && r.Kind != "" && m.Origin.Kind == "" {
		o, err := r.origin(*m)
		if err != nil {
			return err
		}
		m.Origin = o
	}
	return nil
}
