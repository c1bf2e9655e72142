package indexfile

import (
	"encoding/json"
	"strings"
	"testing"
)

// A format 2 model behind a server, as msrag wrote it before format 3.
const format2Remote = `{"name": "openai:m", "model_sha256": "", "tokenizer_sha256": "abc", "dims": 4,
  "max_tokens": 124, "pooling": "none", "normalize": true, "query_prefix": "query: ", "passage_prefix": "passage: ",
  "remote": {"kind": "openai", "model": "m", "endpoints": "http://a:1/v1,http://b:2/v1", "input_type": true,
    "tokenizer": "/t/tokenizer.json", "tokenizer_origin": "server", "server_max_tokens": 128, "headroom": 4}}`

func TestFormat2RemoteBecomesOrigin(t *testing.T) {
	var m ModelInfo
	if err := json.Unmarshal([]byte(format2Remote), &m); err != nil {
		t.Fatal(err)
	}
	wantParams := `{"dims":4,"headroom":4,"input_type":true,"model":"m","normalize":true,"passage_prefix":"passage: ",` +
		`"query_prefix":"query: ","server_max_tokens":128,"tokenizer_origin":"server"}`
	wantAccess := `{"endpoints":["http://a:1/v1","http://b:2/v1"],"tokenizer":"/t/tokenizer.json"}`
	if m.Origin.Kind != "openai" || string(m.Origin.Params) != wantParams || string(m.Origin.Access) != wantAccess {
		t.Errorf("origin %+v", m.Origin)
	}
	// Written again, it is format 3's origin, and reads back the same.
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"remote"`) {
		t.Errorf("written with a remote section: %s", data)
	}
	var back ModelInfo
	if err := json.Unmarshal(data, &back); err != nil || back != m {
		t.Errorf("round trip %+v (%v), want %+v", back, err, m)
	}
}

func TestParamsCanonical(t *testing.T) {
	a, err := ParseParams(`{"b": 1, "a": {"y": 2.50, "x": "s"}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseParams(`{"a":{"x":"s","y":2.50},"b":1}`)
	if err != nil || a != b || a != `{"a":{"x":"s","y":2.50},"b":1}` {
		t.Errorf("%s and %s (%v): want one canonical form", a, b, err)
	}
	for _, bad := range []string{`[1]`, `"s"`, `{"a":`} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := json.Marshal(Origin{Kind: "k", Params: "[1]"}); err == nil {
		t.Error("parameters that are not an object were written")
	}
}

func TestSameModelIgnoresAccess(t *testing.T) {
	m := ModelInfo{Name: "m", Dims: 4, Origin: Origin{Kind: "tei", Params: `{"model":"m"}`, Access: `{"endpoints":["http://a"]}`}}
	moved := m
	moved.Origin.Access = `{"endpoints":["http://b"],"tokenizer":"/elsewhere"}`
	if !m.SameModel(moved) {
		t.Error("the same model at another endpoint is another model")
	}
	other := m
	other.Origin.Params = `{"model":"n"}`
	if m.SameModel(other) {
		t.Error("another served model is the same model")
	}
	kind := m
	kind.Origin.Kind = "openai"
	if m.SameModel(kind) {
		t.Error("another kind is the same model")
	}
	none := m
	none.Origin = Origin{}
	if !m.SameModel(none) {
		t.Error("a model without an origin (format 2, in-process) differs from itself with one")
	}
	none.Dims = 8
	if m.SameModel(none) {
		t.Error("other dims are the same model")
	}
}
