package remote

import (
	"github.com/msrag/msrag/remote/remotetest"

	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// The fake servers' embedding and token count (remotetest's defaults).
var (
	vecFor     = remotetest.Vector
	fakeTokens = remotetest.Tokens
	b64Floats  = remotetest.Base64
	writeJSON  = remotetest.WriteJSON
)

// texts returns n distinct texts.
func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text %d about item %d", i, i*7)
	}
	return out
}

// fake is a remotetest.Server of model "fake-model" and dims dimensions,
// closed at the end of the test.
type fake struct {
	*remotetest.Server
}

// newFake starts a fake server; set its Config before the first request.
// kind is the API the test's client speaks (the route decides the answer).
func newFake(tb testing.TB, kind API, dims int) *fake {
	tb.Helper()
	f := &fake{remotetest.NewServer(remotetest.Config{Model: "fake-model", Dims: dims})}
	tb.Cleanup(f.Close)
	return f
}

// openaiBody builds an OpenAI-compatible response for inputs; order, when
// set, lists the input positions in the order the items are written.
func (f *fake) openaiBody(inputs []string, b64 bool, order []int) any {
	enc := "float"
	if b64 {
		enc = "base64"
	}
	raw, _ := json.Marshal(enc)
	req := remotetest.Request{Path: "/v1/embeddings", Inputs: inputs, Body: map[string]json.RawMessage{"encoding_format": raw}}
	return f.Body(req, order)
}

// fastOptions are Options with quick backoffs for tests.
func fastOptions(kind API, endpoints ...string) Options {
	return Options{API: kind, Endpoints: endpoints, BackoffBase: time.Millisecond, BackoffMax: 20 * time.Millisecond,
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
