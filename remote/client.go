package remote

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Client embeds texts through one or more HTTP embedding servers. It is safe
// for concurrent use: the requests of all calls share Options.Concurrency
// slots and the round-robin over the endpoints. It holds no server-side
// state; Close only drops idle connections.
type Client struct {
	opts      Options // checked, zero values filled
	endpoints []endpoint
	http      *http.Client
	ownHTTP   bool
	sem       chan struct{} // one token per request in flight
	next      atomic.Uint64 // round-robin counter
	logMu     sync.Mutex

	probeMu  sync.Mutex // serialises TEI's GET /info on first use
	probed   bool
	probeErr error

	mu        sync.Mutex // guards what follows
	model     string     // reported by the server
	modelFrom string     // endpoint that first reported it
	dims      int        // fixed by Options.Dimensions or the first response
	maxInput  int        // TEI's max_input_length
	maxBatch  int        // TEI's max_client_batch_size
	batchCap  int        // texts per request in force
	st        counters
}

// New checks opts and makes a Client. It sends nothing: a TEI server's GET
// /info is read on the first call. The caller should Close the Client when
// done with it.
func New(opts Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{opts: o, sem: make(chan struct{}, o.Concurrency), batchCap: o.BatchTexts, dims: o.Dimensions}
	for _, raw := range o.Endpoints {
		ep, err := parseEndpoint(raw, o.API)
		if err != nil {
			return nil, err
		}
		c.endpoints = append(c.endpoints, ep)
	}
	c.st.endpoints = make([]EndpointStats, len(c.endpoints))
	for i, ep := range c.endpoints {
		c.st.endpoints[i].URL = ep.shown
	}
	c.http = o.HTTPClient
	if c.http == nil {
		c.http = &http.Client{Transport: newTransport(o.Timeout, o.Concurrency)}
		c.ownHTTP = true
	}
	return c, nil
}

// Close drops the idle connections of the Client's own HTTP client (not those
// of an Options.HTTPClient). It is safe to call twice; the Client still works
// after it, opening new connections.
func (c *Client) Close() error {
	if c != nil && c.ownHTTP {
		c.http.CloseIdleConnections()
	}
	return nil
}

// Info describes the served model as far as the Client knows it.
type Info struct {
	API       API
	Endpoints []string // embedding URLs, credentials removed
	// Model is the model the server reports: the OpenAI-compatible
	// response's "model", TEI's model_id from GET /info; "" until known.
	Model string
	// Dims is the size of a vector: Options.Dimensions, or what the first
	// response had; 0 before it.
	Dims int
	// MaxInputLength is TEI's max_input_length (tokens, special tokens
	// included); 0 when unknown (always with OpenAI-compatible servers).
	MaxInputLength int
	// MaxClientBatch is TEI's max_client_batch_size; 0 when unknown.
	MaxClientBatch int
	// BatchTexts is the most texts per request in force.
	BatchTexts int
}

// Info returns what is known of the served model.
func (c *Client) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	in := Info{API: c.opts.API, Model: c.model, Dims: c.dims, MaxInputLength: c.maxInput,
		MaxClientBatch: c.maxBatch, BatchTexts: c.batchCap}
	for _, ep := range c.endpoints {
		in.Endpoints = append(in.Endpoints, ep.shown)
	}
	return in
}

// Dims returns the size of a vector, 0 before the first response unless
// Options.Dimensions is set.
func (c *Client) Dims() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dims
}

// Embed embeds texts and returns len(texts) rows of Dims() float32,
// row-major, in the order of texts. The texts are sent as they are: a model's
// role prefix ("passage: ") is the caller's or the server's business (see
// Options.InputType). Requests of at most BatchTexts texts and BatchBytes
// bytes run Concurrency at a time; one that fails for good cancels the others
// and its *RequestError is returned. Cancelling ctx stops everything at once.
func (c *Client) Embed(ctx context.Context, texts []string) ([]float32, error) {
	out, _, err := c.embed(ctx, texts, c.opts.InputType)
	return out, err
}

// EmbedWithUsage is Embed that also reports each request: which texts it
// carried, where it went and the prompt tokens the server counted.
func (c *Client) EmbedWithUsage(ctx context.Context, texts []string) ([]float32, []Usage, error) {
	return c.embed(ctx, texts, c.opts.InputType)
}

// EmbedAs is EmbedWithUsage with inputType sent as "input_type" instead of
// Options.InputType, so that one Client (one set of concurrency slots) embeds
// both queries and passages on a server that tells them apart that way. It
// is an ErrOptions error with TEI, whose /embed has no such field.
func (c *Client) EmbedAs(ctx context.Context, inputType string, texts []string) ([]float32, []Usage, error) {
	if c.opts.API == TEI && inputType != "" {
		return nil, nil, fmt.Errorf("remote: input type %q: tei's /embed has no input_type: %w", inputType, ErrOptions)
	}
	return c.embed(ctx, texts, inputType)
}

// embed runs one call: plan the batches, run them, gather the rows.
func (c *Client) embed(ctx context.Context, texts []string, inputType string) ([]float32, []Usage, error) {
	return c.embedBy(ctx, texts, inputType, 0)
}

// embedBy is embed with at most perRequest texts per request (0: the
// batch size in force).
func (c *Client) embedBy(ctx context.Context, texts []string, inputType string, perRequest int) ([]float32, []Usage, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("remote: embedding %d texts: %w", len(texts), err)
	}
	if len(texts) == 0 {
		return []float32{}, nil, nil
	}
	for i, t := range texts {
		if !utf8.ValidString(t) {
			return nil, nil, fmt.Errorf("remote: text %d is not valid UTF-8: %w", i, ErrInput)
		}
	}
	if err := c.probe(ctx); err != nil {
		return nil, nil, err
	}
	c.mu.Lock()
	limit := c.batchCap
	c.mu.Unlock()
	if perRequest > 0 {
		limit = min(limit, perRequest)
	}
	j := &call{c: c, texts: texts, inputType: inputType, batches: planBatches(texts, limit, c.opts.BatchBytes)}
	j.usage = make([]Usage, len(j.batches))
	if err := j.run(ctx); err != nil {
		return nil, nil, err
	}
	return j.out, j.usage, nil
}

// call is one Embed call in progress.
type call struct {
	c         *Client
	texts     []string
	inputType string
	batches   []span
	usage     []Usage

	outMu sync.Mutex
	out   []float32 // allocated once the dimensions are known

	errMu sync.Mutex
	err   error // the first failure
}

// run starts up to Concurrency workers that take batches in order until all
// are done or one fails.
func (j *call) run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(j.c.opts.Concurrency, len(j.batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWorker()
			for {
				b := int(next.Add(1) - 1)
				if b >= len(j.batches) || ctx.Err() != nil {
					return
				}
				if err := j.c.doBatch(ctx, j, b, w); err != nil {
					j.fail(err)
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	if j.err == nil && parent.Err() != nil {
		return fmt.Errorf("remote: embedding %d texts: %w", len(j.texts), parent.Err())
	}
	return j.err
}

// fail records the first error of the call; later ones are mostly the
// cancellation it caused.
func (j *call) fail(err error) {
	j.errMu.Lock()
	defer j.errMu.Unlock()
	if j.err == nil {
		j.err = err
	}
}

// rows returns the output rows of batch s, allocating the output on first use.
func (j *call) rows(s span, dims int) []float32 {
	j.outMu.Lock()
	defer j.outMu.Unlock()
	if j.out == nil {
		j.out = make([]float32, len(j.texts)*dims)
	}
	return j.out[s.lo*dims : s.hi*dims]
}
