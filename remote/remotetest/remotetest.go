// Package remotetest provides a fake embedding server for tests, as
// net/http/httptest provides HTTP servers: an OpenAI-compatible POST
// .../embeddings (float and base64 encodings) and text-embeddings-inference's
// POST .../embed and GET .../info, over a deterministic embedder, with fault
// modes that a broken or hostile server shows (all-zero, NaN vectors, wrong
// counts, changing dimensions, huge bodies, slow headers, a connection reset
// mid-body, error statuses).
//
// The route decides the API: a path ending in /embeddings is answered as an
// OpenAI-compatible server, /embed as TEI, /info with TEI's model info; so one
// Server serves both kinds (openai:URL/v1 and tei:URL).
package remotetest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets up a Server. Its zero value serves 8-dimensional Vector
// embeddings of model "remotetest-model".
type Config struct {
	// Model is the model reported ("model"; TEI's model_id); "" is
	// "remotetest-model".
	Model string
	// Dims is the vector size of the default embedder; 0 is 8.
	Dims int
	// Embed, when set, embeds one text; its input type ("query",
	// "passage" or "") is what the request's input_type said.
	Embed func(text, inputType string) []float32
	// Tokens counts a text's prompt tokens for usage.prompt_tokens; nil is
	// the number of its words plus 2.
	Tokens func(text string) int
	// NoUsage leaves usage out of OpenAI-compatible responses.
	NoUsage bool
	// MaxInputLength and MaxClientBatchSize are what GET /info reports; 0
	// is 512 and 1000.
	MaxInputLength, MaxClientBatchSize int
	// Delay is waited before every embedding response.
	Delay time.Duration
	// Handle, when set, may answer embedding request n (counted from 1)
	// itself and returns true when it did.
	Handle func(n int, req Request, w http.ResponseWriter, r *http.Request) bool
}

// Request is an embedding request as the Server received it.
type Request struct {
	Path   string
	Auth   string // the Authorization header
	Inputs []string
	Body   map[string]json.RawMessage
	At     time.Time
}

// InputType returns the request's "input_type", "" when absent.
func (r Request) InputType() string { return r.str("input_type") }

// Encoding returns the request's "encoding_format", "" when absent.
func (r Request) Encoding() string { return r.str("encoding_format") }

func (r Request) str(key string) string {
	var s string
	json.Unmarshal(r.Body[key], &s)
	return s
}

// TEI reports whether the request came to TEI's /embed.
func (r Request) TEI() bool { return strings.HasSuffix(r.Path, "/embed") }

// Server is a fake embedding server. Its Config may be changed after
// NewServer but not after the first request; SetFault may change its
// fault at any time.
type Server struct {
	*httptest.Server
	Config Config

	faultMu sync.Mutex
	fault   Fault

	n, infoCalls, inflight, maxInflight atomic.Int64
	mu                                  sync.Mutex
	reqs                                []Request
}

// NewServer starts a Server; the caller Closes it.
func NewServer(cfg Config) *Server {
	if cfg.Model == "" {
		cfg.Model = "remotetest-model"
	}
	if cfg.Dims == 0 {
		cfg.Dims = 8
	}
	if cfg.MaxInputLength == 0 {
		cfg.MaxInputLength = 512
	}
	if cfg.MaxClientBatchSize == 0 {
		cfg.MaxClientBatchSize = 1000
	}
	s := &Server{Config: cfg}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// OpenAIURL is the base URL of the OpenAI-compatible route (URL + "/v1").
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// Requests returns the number of embedding requests received.
func (s *Server) Requests() int { return int(s.n.Load()) }

// InfoRequests returns the number of GET /info requests received.
func (s *Server) InfoRequests() int { return int(s.infoCalls.Load()) }

// MaxInFlight returns the most embedding requests that were in flight at once.
func (s *Server) MaxInFlight() int { return int(s.maxInflight.Load()) }

// Received returns the embedding requests received so far.
func (s *Server) Received() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Vector is the default embedder: dims values in [-1, 1] fixed by the text,
// never all zero.
func Vector(text string, dims int) []float32 {
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
	if dims > 0 && allZero(v) {
		v[0] = 1
	}
	return v
}

func allZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Tokens is the default prompt token count: the text's words plus 2.
func Tokens(text string) int { return len(strings.Fields(text)) + 2 }

// Base64 encodes a vector as an OpenAI-compatible base64 embedding: its
// float32 values little-endian.
func Base64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/info") {
		s.infoCalls.Add(1)
		WriteJSON(w, http.StatusOK, map[string]any{"model_id": s.Config.Model, "max_input_length": s.Config.MaxInputLength,
			"max_client_batch_size": s.Config.MaxClientBatchSize})
		return
	}
	cur := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for m := s.maxInflight.Load(); cur > m && !s.maxInflight.CompareAndSwap(m, cur); m = s.maxInflight.Load() {
	}
	req := Request{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), At: time.Now()}
	if err := json.NewDecoder(r.Body).Decode(&req.Body); err != nil {
		WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "bad json: " + err.Error()}})
		return
	}
	key := "input"
	if req.TEI() {
		key = "inputs"
	}
	json.Unmarshal(req.Body[key], &req.Inputs)
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	n := int(s.n.Add(1))
	if s.Config.Delay > 0 {
		select {
		case <-time.After(s.Config.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if s.Config.Handle != nil && s.Config.Handle(n, req, w, r) {
		return
	}
	if f, ok := s.faultFor(n); ok {
		s.answerFault(f, n, req, w, r)
		return
	}
	s.Answer(w, req)
}

// Answer writes the correct response to req.
func (s *Server) Answer(w http.ResponseWriter, req Request) {
	WriteJSON(w, http.StatusOK, s.Body(req, nil))
}

// Vectors returns the vectors of req's texts as the Server embeds them.
func (s *Server) Vectors(req Request) [][]float32 {
	out := make([][]float32, len(req.Inputs))
	for i, t := range req.Inputs {
		if s.Config.Embed != nil {
			out[i] = s.Config.Embed(t, req.InputType())
		} else {
			out[i] = Vector(t, s.Config.Dims)
		}
	}
	return out
}

// Body returns the correct response body of req, in the shape of its route
// and encoding; order, when set, lists the input positions in the order an
// OpenAI-compatible response writes its items.
func (s *Server) Body(req Request, order []int) any {
	return s.body(req, s.Vectors(req), order)
}

// body shapes vecs as the response to req.
func (s *Server) body(req Request, vecs [][]float32, order []int) any {
	if req.TEI() {
		return vecs
	}
	if order == nil {
		order = make([]int, len(vecs))
		for i := range order {
			order[i] = i
		}
	}
	data := make([]map[string]any, 0, len(order))
	for _, i := range order {
		var emb any = vecs[i]
		if req.Encoding() == "base64" {
			emb = Base64(vecs[i])
		}
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": emb})
	}
	out := map[string]any{"object": "list", "data": data, "model": s.Config.Model}
	if !s.Config.NoUsage {
		count, tokens := s.Config.Tokens, 0
		if count == nil {
			count = Tokens
		}
		for _, t := range req.Inputs {
			tokens += count(t)
		}
		out["usage"] = map[string]any{"prompt_tokens": tokens, "total_tokens": tokens}
	}
	return out
}

// WriteJSON writes v as a JSON response with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// WriteError writes an error response in OpenAI's shape ({"error":
// {"message"}}) with status.
func WriteError(w http.ResponseWriter, status int, message string) {
	WriteJSON(w, status, map[string]any{"error": map[string]any{"message": message}})
}
