package remote

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// vecFor is the fake servers' embedding of text: dims values fixed by the text.
func vecFor(text string, dims int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64()
	v := make([]float32, dims)
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = float32(int64(x%2001)-1000) / 1000
	}
	return v
}

// fakeTokens is the fake OpenAI server's prompt token count of a text.
func fakeTokens(text string) int { return len(strings.Fields(text)) + 2 }

// texts returns n distinct texts.
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %d about item %d", i, i*7)
	}
	return out
}

// seen is one request as a fake server received it.
type seen struct {
	path   string
	auth   string
	inputs []string
	body   map[string]json.RawMessage
	at     time.Time
}

// fake is an embedding server for tests. By default it answers every request
// correctly in the shape of its kind; handle, when set, may answer request n
// (counted from 1) itself and returns true when it did.
type fake struct {
	*httptest.Server
	tb       testing.TB
	kind     Kind
	dims     int
	model    string
	maxBatch int              // TEI's max_client_batch_size in /info
	delay    time.Duration    // before answering each request
	count    func(string) int // prompt tokens of a text; nil: fakeTokens
	noUsage  bool             // leave usage out of OpenAI-compatible responses
	handle   func(n int, s seen, w http.ResponseWriter, r *http.Request) bool

	n           atomic.Int64
	inflight    atomic.Int64
	maxInflight atomic.Int64
	infoCalls   atomic.Int64
	mu          sync.Mutex
	reqs        []seen
}

// newFake starts a fake server; set its fields before the first request.
func newFake(tb testing.TB, kind Kind, dims int) *fake {
	tb.Helper()
	f := &fake{tb: tb, kind: kind, dims: dims, model: "fake-model", maxBatch: 1000}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.Close)
	return f
}

// requests returns the requests received so far.
func (f *fake) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info") {
		f.infoCalls.Add(1)
		writeJSON(w, 200, map[string]any{"model_id": f.model, "max_input_length": 512, "max_client_batch_size": f.maxBatch})
		return
	}
	cur := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		m := f.maxInflight.Load()
		if cur <= m || f.maxInflight.CompareAndSwap(m, cur) {
			break
		}
	}
	s := seen{path: r.URL.Path, auth: r.Header.Get("Authorization"), at: time.Now()}
	if err := json.NewDecoder(r.Body).Decode(&s.body); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "bad json: " + err.Error()}})
		return
	}
	key := "input"
	if f.kind == TEI {
		key = "inputs"
	}
	json.Unmarshal(s.body[key], &s.inputs)
	f.mu.Lock()
	f.reqs = append(f.reqs, s)
	f.mu.Unlock()
	n := int(f.n.Add(1))
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.handle != nil && f.handle(n, s, w, r) {
		return
	}
	f.answer(w, s)
}

// answer writes the correct response to s.
func (f *fake) answer(w http.ResponseWriter, s seen) {
	if f.kind == TEI {
		rows := make([][]float32, len(s.inputs))
		for i, t := range s.inputs {
			rows[i] = vecFor(t, f.dims)
		}
		writeJSON(w, 200, rows)
		return
	}
	var enc string
	json.Unmarshal(s.body["encoding_format"], &enc)
	writeJSON(w, 200, f.openaiBody(s.inputs, enc == "base64", nil))
}

// openaiBody builds an OpenAI-compatible response for inputs; order, when
// set, lists the input positions in the order the items are written.
func (f *fake) openaiBody(inputs []string, b64 bool, order []int) map[string]any {
	if order == nil {
		order = make([]int, len(inputs))
		for i := range order {
			order[i] = i
		}
	}
	data := make([]map[string]any, 0, len(inputs))
	tokens := 0
	for _, i := range order {
		v := vecFor(inputs[i], f.dims)
		var emb any = v
		if b64 {
			emb = b64Floats(v)
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": emb})
	}
	count := f.count
	if count == nil {
		count = fakeTokens
	}
	for _, t := range inputs {
		tokens += count(t)
	}
	if f.noUsage {
		return map[string]any{"object": "list", "data": data, "model": f.model}
	}
	return map[string]any{"object": "list", "data": data, "model": f.model,
		"usage": map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}}
}

func b64Floats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// fastOptions are Options with quick backoffs for tests.
func fastOptions(kind Kind, endpoints ...string) Options {
	return Options{Kind: kind, Endpoints: endpoints, BackoffBase: time.Millisecond, BackoffMax: 20 * time.Millisecond,
		Timeout: 5 * time.Second}
}

// mustNew makes a Client or fails the test.
func mustNew(tb testing.TB, o Options) *Client {
	tb.Helper()
	c, err := New(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// checkRows fails unless out holds vecFor of each text, in order.
func checkRows(tb testing.TB, out []float32, in []string, dims int) {
	tb.Helper()
	if len(out) != len(in)*dims {
		tb.Fatalf("got %d values, want %d rows of %d", len(out), len(in), dims)
	}
	for i, t := range in {
		want := vecFor(t, dims)
		got := out[i*dims : (i+1)*dims]
		for k := range want {
			if got[k] != want[k] {
				tb.Fatalf("row %d (%q) value %d = %v, want %v", i, t, k, got[k], want[k])
			}
		}
	}
}
