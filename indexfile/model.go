package indexfile

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ModelInfo identifies the embedding model an index was built with: what an
// index checks a model against before it searches with it.
type ModelInfo struct {
	// Name is the model's name (embed.Spec.Name).
	Name string `json:"name"`
	// ModelSHA256 and TokenizerSHA256 are the sha256 of the model's
	// model.onnx and tokenizer.json ("" where there is no such file, as for
	// a model behind a server).
	ModelSHA256     string `json:"model_sha256"`
	TokenizerSHA256 string `json:"tokenizer_sha256"`
	// Dims is the vectors' length; MaxTokens the longest sequence, special
	// tokens and prefix included.
	Dims      int `json:"dims"`
	MaxTokens int `json:"max_tokens"`
	// Pooling ("mean", "cls", "none") and Normalize say how a vector was
	// made of the token outputs.
	Pooling   string `json:"pooling"`
	Normalize bool   `json:"normalize"`
	// QueryPrefix and PassagePrefix are put in front of texts of each role.
	QueryPrefix   string `json:"query_prefix"`
	PassagePrefix string `json:"passage_prefix"`
	// Precision is the precision the model ran in (embed.Spec.Precision):
	// "fp16" for a half-precision conversion, whose file ModelSHA256 is
	// then the sum of; "" for the model as published (fp32), as in every
	// index made before fp16 models.
	Precision string `json:"precision,omitempty"`
	// Origin says how the model was opened, to open it again; it is absent
	// (the zero value) for an embedder that reports none and in format 1
	// and 2 manifests of in-process models, which are opened by Name.
	Origin Origin `json:"origin,omitzero"`
}

// None reports whether m is the model of an index built without one:
// origin kind NoModel, no vectors.
func (m ModelInfo) None() bool { return m.Origin.Kind == NoModel }

// PrecisionName names the precision m ran in: Precision, or "fp32" when
// none is recorded.
func (m ModelInfo) PrecisionName() string {
	if m.Precision == "" {
		return "fp32"
	}
	return m.Precision
}

// Origin is how an embedder was opened: the name of its kind in package
// embed's registry and the kind's parameters, stored as the kind wrote them.
type Origin struct {
	// Kind is the kind's registered name ("onnx", "openai", "tei", ...).
	Kind string `json:"kind"`
	// Params are what identifies the model to its kind (for a model behind
	// a server: the model the server reported, whether it adds the
	// prefixes, its longest sequence...).
	Params Params `json:"params,omitempty"`
	// Access is how the model was reached (for a server: its endpoints and
	// the tokenizer file's path); another way to reach the same model may
	// be given when it is opened again, so it is no part of its identity.
	Access Params `json:"access,omitempty"`
}

// Params is a JSON object kept as its compact text, uninterpreted; "" is
// none. Being a string, it keeps ModelInfo comparable with ==.
type Params string

// MarshalJSON writes the object as it was recorded; text that is not a
// JSON object is an error.
func (p Params) MarshalJSON() ([]byte, error) {
	if p == "" {
		return []byte("null"), nil
	}
	if !json.Valid([]byte(p)) || p[0] != '{' {
		return nil, fmt.Errorf("indexfile: origin parameters %.80s: not a JSON object", string(p))
	}
	return []byte(p), nil
}

// UnmarshalJSON keeps the object in a canonical form (keys sorted, no
// spaces), so that equal objects are equal strings; null is none.
func (p *Params) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); string(s) == "null" {
		*p = ""
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("indexfile: origin parameters %.80s: want a JSON object: %w", b, err)
	}
	canon, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("indexfile: origin parameters: %w", err)
	}
	*p = Params(canon)
	return nil
}

// ParseParams returns the Params of a JSON object's text; "" is none.
func ParseParams(s string) (Params, error) {
	if s == "" {
		return "", nil
	}
	var p Params
	err := p.UnmarshalJSON([]byte(s))
	if p == "{}" {
		p = ""
	}
	return p, err
}

// MakeParams encodes v (a struct or map) as Params; an empty object is none.
func MakeParams(v any) (Params, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("indexfile: origin parameters: %w", err)
	}
	return ParseParams(string(b))
}

// Decode decodes the object into v; none leaves v as it is.
func (p Params) Decode(v any) error {
	if p == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(p), v); err != nil {
		return fmt.Errorf("indexfile: origin parameters %s: %w", p, err)
	}
	return nil
}

// Identity returns the origin without how the model was reached (Access).
func (o Origin) Identity() Origin {
	o.Access = ""
	return o
}

// SameModel reports whether m and o identify the same model: every field
// alike, the origins' kinds and parameters too when both record one, however
// the model was reached (Origin.Access: a server's endpoints, the path of its
// tokenizer file).
func (m ModelInfo) SameModel(o ModelInfo) bool {
	a, b := m.Origin.Identity(), o.Origin.Identity()
	if a.Kind == "" || b.Kind == "" {
		a, b = Origin{}, Origin{}
	}
	m.Origin, o.Origin = a, b
	return m == o
}
