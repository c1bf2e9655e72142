package remote

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// refResponse is what a reference decoder built on encoding/json read from
// a response it found valid: vectors by row, the model, the prompt tokens.
type refResponse struct {
	rows   [][]float32
	model  string
	tokens int64
}

// refVector decodes one vector with encoding/json: an array of numbers or a
// base64 string of little-endian float32; ok only when non-empty, finite
// and not all zero.
func refVector(raw json.RawMessage) ([]float32, bool) {
	var v []float32
	if json.Unmarshal(raw, &v) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b)%4 != 0 {
			return nil, false
		}
		for k := 0; k < len(b); k += 4 {
			v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b[k:])))
		}
	}
	zero := true
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false
		}
		zero = zero && x == 0
	}
	return v, len(v) > 0 && !zero
}

// refOpenAI decodes an OpenAI-compatible response with encoding/json and
// exact key matching; ok only when it is fully valid.
func refOpenAI(body []byte) (refResponse, bool) {
	var top map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || json.Unmarshal(top["data"], &items) != nil || items == nil {
		return refResponse{}, false
	}
	r := refResponse{rows: make([][]float32, len(items)), tokens: -1}
	if m, ok := top["model"]; ok && string(m) != "null" && json.Unmarshal(m, &r.model) != nil {
		return refResponse{}, false
	}
	if u, ok := top["usage"]; ok && string(u) != "null" {
		var usage map[string]json.RawMessage
		if json.Unmarshal(u, &usage) != nil {
			return refResponse{}, false
		}
		if p, ok := usage["prompt_tokens"]; ok && string(p) != "null" && json.Unmarshal(p, &r.tokens) != nil {
			return refResponse{}, false
		}
	}
	for k, item := range items {
		idx := k
		if raw, ok := item["index"]; ok && string(raw) != "null" && json.Unmarshal(raw, &idx) != nil {
			return refResponse{}, false
		}
		v, ok := refVector(item["embedding"])
		if !ok || idx < 0 || idx >= len(items) || r.rows[idx] != nil || len(v) != len(r.rows[0]) && r.rows[0] != nil {
			return refResponse{}, false
		}
		r.rows[idx] = v
	}
	return r, sameLengths(r.rows)
}

// refTEI decodes a TEI /embed response with encoding/json.
func refTEI(body []byte) (refResponse, bool) {
	var raws []json.RawMessage
	if json.Unmarshal(body, &raws) != nil || raws == nil {
		return refResponse{}, false
	}
	r := refResponse{tokens: -1}
	for _, raw := range raws {
		v, ok := refVector(raw)
		if !ok {
			return refResponse{}, false
		}
		r.rows = append(r.rows, v)
	}
	return r, sameLengths(r.rows)
}

func sameLengths(rows [][]float32) bool {
	for _, r := range rows {
		if r == nil || len(r) != len(rows[0]) {
			return false
		}
	}
	return true
}

// hasDuplicateKeys reports whether an object of the document repeats a key,
// where encoding/json's last-one-wins and a one-pass reader may differ.
func hasDuplicateKeys(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		keys   map[string]bool
		object bool
		isKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' || t == '[' {
				if top != nil && top.object {
					top.isKey = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, object: t == '{', isKey: t == '{'})
			} else {
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.isKey {
				if top.keys[t] {
					return true
				}
				top.keys[t] = true
				top.isKey = false
				continue
			}
		}
		if top != nil && top.object {
			top.isKey = true
		}
	}
}

// fuzzSeeds are responses of both shapes, valid and not.
var fuzzSeeds = []string{
	`{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0.5,-1]},{"object":"embedding","index":0,"embedding":[1e-3,2]}],"model":"m","usage":{"prompt_tokens":7,"total_tokens":7}}`,
	`{"data":[{"embedding":"AACAPwAAAEA=","index":0}],"model":"e5","usage":{"prompt_tokens":3}}`,
	`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`,
	`{"data":[{"index":0,"embedding":[NaN]}]}`,
	`{"data":[],"model":null,"usage":null}`,
	`[[0.25,0.5],[1,2]]`,
	`[[1],[1,2]]`,
	`[["AACAPw=="]]`,
	`[[0,0],[0,-0.0]]`,
	`{"data":[{"index":0,"embedding":"AAAAAAAAAAA="}]}`,
	`{"model":"caf\u00e9","data":[{"embedding":[1]}]}`,
}

func FuzzDecodeOpenAI(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := newWorker()
		ref, ok := refOpenAI(body)
		if !ok || hasDuplicateKeys(body) {
			decodeOpenAI(body, span{0, 3, 0}, 0, "", w) // must not panic
			return
		}
		n := len(ref.rows)
		got, err := decodeOpenAI(body, span{0, n, 0}, 0, "", w)
		if n == 0 {
			return // no vectors: nothing to compare
		}
		if err != nil {
			t.Fatalf("encoding/json reads %q, decodeOpenAI fails: %v", body, err)
		}
		if got.model != ref.model || got.tokens != ref.tokens {
			t.Fatalf("%q: model %q tokens %d, want %q %d", body, got.model, got.tokens, ref.model, ref.tokens)
		}
		compareRows(t, body, w.vals, got.dims, ref.rows)
	})
}

func FuzzDecodeTEI(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := newWorker()
		ref, ok := refTEI(body)
		if !ok {
			decodeTEI(body, span{0, 2, 0}, 0, "", w) // must not panic
			return
		}
		n := len(ref.rows)
		got, err := decodeTEI(body, span{0, n, 0}, 0, "", w)
		if n == 0 {
			return
		}
		if err != nil {
			t.Fatalf("encoding/json reads %q, decodeTEI fails: %v", body, err)
		}
		compareRows(t, body, w.vals, got.dims, ref.rows)
	})
}

// compareRows fails unless vals holds rows, row-major with dims values each.
func compareRows(t *testing.T, body []byte, vals []float32, dims int, rows [][]float32) {
	t.Helper()
	if dims != len(rows[0]) || len(vals) < len(rows)*dims {
		t.Fatalf("%q: %d dims, %d values; want %d rows of %d", body, dims, len(vals), len(rows), len(rows[0]))
	}
	for i, row := range rows {
		for k, v := range row {
			if got := vals[i*dims+k]; got != v {
				t.Fatalf("%q: row %d value %d = %v, want %v", body, i, k, got, v)
			}
		}
	}
}

// FuzzServerMessage checks that any error body gives a message of one line,
// at most 500 bytes and an ellipsis, without the API key.
func FuzzServerMessage(f *testing.F) {
	for _, s := range []string{`{"error":{"message":"bad sk-secret"}}`, `{"error":"x"}`, `{"detail":[{"msg":"y"}]}`,
		`{"error":{"message":"cut here`, "plain\ntext sk-secret", `{"message":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg := serverMessage(body, "sk-secret")
		if len(msg) > 503 || strings.ContainsAny(msg, "\n\r") || strings.Contains(msg, "sk-secret") {
			t.Fatalf("serverMessage(%q) = %q", body, msg)
		}
	})
}
