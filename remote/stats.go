package remote

import (
	"slices"
	"time"
)

// Stats are counters of a Client's work since New. Requests are embedding
// requests; TEI's GET /info is not counted.
type Stats struct {
	Requests   int64 // requests sent, retries included
	Retries    int64 // of them, retries of a failed one
	Failed     int64 // batches that failed for good (not those cancelled)
	Texts      int64 // texts embedded
	InputBytes int64 // UTF-8 bytes of the texts embedded
	// PromptTokens sums usage.prompt_tokens over the successful responses
	// that reported it (OpenAI-compatible servers; TEI's /embed reports
	// none), and TokenReports counts those responses.
	PromptTokens int64
	TokenReports int64
	// Busy is the wall time during which at least one request was in flight.
	Busy      time.Duration
	Endpoints []EndpointStats // in the order of Options.Endpoints
}

// EndpointStats are the counters of one endpoint.
type EndpointStats struct {
	URL      string // embedding URL, credentials removed
	Requests int64  // requests sent to it
	Errors   int64  // of them, those that failed: no response, an error status, a bad response
	Texts    int64  // texts it embedded
}

// counters are the Client's running Stats, guarded by Client.mu.
type counters struct {
	requests, retries, failed, texts, bytes, tokens, tokenReports int64
	inflight                                                      int
	busySince                                                     time.Time
	busy                                                          time.Duration
	endpoints                                                     []EndpointStats
}

// Stats returns the counters so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.st
	busy := s.busy
	if s.inflight > 0 {
		busy += time.Since(s.busySince)
	}
	return Stats{Requests: s.requests, Retries: s.retries, Failed: s.failed, Texts: s.texts, InputBytes: s.bytes,
		PromptTokens: s.tokens, TokenReports: s.tokenReports, Busy: busy, Endpoints: slices.Clone(s.endpoints)}
}

// begin counts a request to endpoint ep going out.
func (c *Client) begin(ep int, retry bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.requests++
	if retry {
		c.st.retries++
	}
	c.st.endpoints[ep].Requests++
	if c.st.inflight == 0 {
		c.st.busySince = time.Now()
	}
	c.st.inflight++
}

// end counts a request to endpoint ep done.
func (c *Client) end(ep int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.inflight--
	if c.st.inflight == 0 {
		c.st.busy += time.Since(c.st.busySince)
	}
}

// noteError counts a failed attempt against endpoint ep.
func (c *Client) noteError(ep int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.endpoints[ep].Errors++
}

// noteFailed counts a batch that failed for good.
func (c *Client) noteFailed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.failed++
}

// noteBatch counts batch s embedded by endpoint ep, with the prompt tokens
// the server reported (-1 for none).
func (c *Client) noteBatch(ep int, s span, tokens int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := int64(s.hi - s.lo)
	c.st.texts += n
	c.st.bytes += int64(s.bytes)
	c.st.endpoints[ep].Texts += n
	if tokens >= 0 {
		c.st.tokens += tokens
		c.st.tokenReports++
	}
}
