package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// worker holds the buffers one worker goroutine reuses from batch to batch.
type worker struct {
	req    bytes.Buffer // request body, kept across the retries of a batch
	resp   bytes.Buffer // response body of the last attempt
	status int          // its HTTP status
	vals   []float32    // one response's vectors, row-major in input order
	tmp    []float32    // one vector as decoded
	seen   []bool       // indices met in one response
	raw    []byte       // base64-decoded bytes of one vector
}

// newWorker returns a worker with empty buffers; they grow to the largest
// batch it meets and go with it at the end of the call.
func newWorker() *worker { return &worker{} }

// openaiRequest is the body of POST {base}/embeddings.
type openaiRequest struct {
	Input          []string `json:"input"`
	Model          string   `json:"model,omitempty"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format"`
	InputType      string   `json:"input_type,omitempty"`
}

// teiRequest is the body of TEI's POST {base}/embed. Truncate is always sent,
// false, so that the server refuses an over-long input instead of cutting it,
// whatever its --auto-truncate says.
type teiRequest struct {
	Inputs    []string `json:"inputs"`
	Truncate  bool     `json:"truncate"`
	Normalize *bool    `json:"normalize,omitempty"`
}

// encodeRequest writes the JSON body of a request for texts into buf.
func (c *Client) encodeRequest(buf *bytes.Buffer, texts []string, inputType string) error {
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if c.opts.API == TEI {
		r := teiRequest{Inputs: texts}
		if c.opts.NoNormalize {
			r.Normalize = new(bool)
		}
		return enc.Encode(r)
	}
	return enc.Encode(openaiRequest{Input: texts, Model: c.opts.Model, Dimensions: c.opts.Dimensions,
		EncodingFormat: c.opts.Encoding.String(), InputType: inputType})
}

// attempt is the outcome of one request that did not succeed.
type attempt struct {
	status     int           // HTTP status; 0 when no response came
	message    string        // the server's message or the transport's error, key removed
	kind       error         // sentinel
	cause      error         // underlying error, if any
	retry      bool          // whether another attempt may succeed
	retryAfter time.Duration // the server's Retry-After; -1 when none
}

// doBatch sends batch b of j, retrying as the Options allow, and stores its
// rows and usage.
func (c *Client) doBatch(ctx context.Context, j *call, b int, w *worker) error {
	s := j.batches[b]
	if err := c.encodeRequest(&w.req, j.texts[s.lo:s.hi], j.inputType); err != nil {
		return fmt.Errorf("remote: texts %d..%d: encoding the request: %v: %w", s.lo, s.hi-1, err, ErrOptions)
	}
	for n := 1; ; n++ {
		ep := c.pick()
		a := c.send(ctx, ep, n > 1, w, c.responseLimit(s.hi-s.lo))
		if a == nil {
			return c.accept(j, b, ep, w, n)
		}
		rerr := c.requestError(s, ep, n, a)
		if ctx.Err() != nil { // cancelled by the caller or by another batch's failure
			return rerr
		}
		if !a.retry || n > c.opts.MaxRetries {
			c.noteFailed()
			return rerr
		}
		wait := c.backoff(n, a.retryAfter)
		c.logf("%s; retry %d of %d in %v", rerr.Error(), n, c.opts.MaxRetries, wait.Round(time.Millisecond))
		if err := sleep(ctx, wait); err != nil {
			rerr.cause, rerr.Message = err, rerr.Message+"; then, waiting to retry: "+err.Error()
			return rerr
		}
	}
}

// pick returns the next endpoint in round-robin order.
func (c *Client) pick() int {
	return int((c.next.Add(1) - 1) % uint64(len(c.endpoints)))
}

// requestError describes a failed attempt of batch s.
func (c *Client) requestError(s span, ep, attempts int, a *attempt) *RequestError {
	return &RequestError{First: s.lo, Last: s.hi - 1, Endpoint: c.endpoints[ep].shown, Status: a.status,
		Message: a.message, Attempts: attempts, Kind: a.kind, cause: a.cause}
}

// responseLimit is the most bytes of a successful response to n texts.
func (c *Client) responseLimit(n int) int64 {
	dims, _ := c.wantDims()
	return bodyLimit(n, dims, c.opts.Encoding)
}

// send makes one request of the body in w.req to endpoint ep within a
// concurrency slot and the per-request timeout, reading the response body
// into w.resp: at most limit bytes of a 2xx response, errorBodyLimit of
// another. It returns nil when a 2xx response was read whole.
func (c *Client) send(ctx context.Context, ep int, retry bool, w *worker, limit int64) *attempt {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return &attempt{kind: ErrTransport, cause: ctx.Err(), message: "waiting for a request slot: " + ctx.Err().Error()}
	}
	defer func() { <-c.sem }()
	c.begin(ep, retry)
	defer c.end(ep)

	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.endpoints[ep].embed, bytes.NewReader(w.req.Bytes()))
	if err != nil {
		return c.failed(ep, &attempt{kind: ErrOptions, cause: err, message: scrub(err.Error(), c.opts.APIKey)})
	}
	c.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return c.failed(ep, c.transportFailure(ctx, err, 0, "sending"))
	}
	defer res.Body.Close()
	ok := res.StatusCode >= 200 && res.StatusCode <= 299
	if !ok {
		limit = errorBodyLimit // the message is all that is kept of it
	}
	over, err := readLimited(&w.resp, res.Body, limit)
	if err != nil && (ok || w.resp.Len() == 0) {
		return c.failed(ep, c.transportFailure(ctx, err, res.StatusCode, "reading the response"))
	}
	if !ok {
		return c.failed(ep, c.statusFailure(res, w.resp.Bytes()))
	}
	if over {
		return c.failed(ep, &attempt{status: res.StatusCode, kind: errTooLarge, retryAfter: -1,
			message: fmt.Sprintf("response body over %d bytes, the most its vectors can take", limit)})
	}
	w.status = res.StatusCode
	return nil
}

// setHeaders sets the headers every request carries.
func (c *Client) setHeaders(req *http.Request) {
	req.Header.Set("Accept", "application/json")
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
}

// transportFailure describes an attempt that got no (whole) response. It may
// be retried unless the caller's context is done.
func (c *Client) transportFailure(ctx context.Context, err error, status int, doing string) *attempt {
	msg := doing + ": " + scrub(err.Error(), c.opts.APIKey)
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		msg = fmt.Sprintf("%s: no answer within the timeout of %v", doing, c.opts.Timeout)
	}
	return &attempt{status: status, kind: ErrTransport, cause: err, message: msg,
		retry: ctx.Err() == nil, retryAfter: -1}
}

// statusFailure describes an error status: what the server said, whether it
// is worth another attempt and how long the server asks to wait.
func (c *Client) statusFailure(res *http.Response, body []byte) *attempt {
	a := &attempt{status: res.StatusCode, kind: ErrStatus, message: serverMessage(body, c.opts.APIKey),
		retry: retryableStatus(res.StatusCode), retryAfter: retryAfter(res.Header, time.Now())}
	if isTooLong(res.StatusCode, a.message) {
		a.kind = ErrTooLong
		if m := c.Info().MaxInputLength; m > 0 {
			a.message += fmt.Sprintf(" (the server's max_input_length is %d tokens)", m)
		}
	}
	return a
}

// failed counts a failed attempt against endpoint ep and returns a.
func (c *Client) failed(ep int, a *attempt) *attempt {
	c.noteError(ep)
	return a
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logf writes one line to Options.Log. Every argument must already be free
// of the API key.
func (c *Client) logf(format string, args ...any) {
	if c.opts.Log == nil {
		return
	}
	c.logMu.Lock()
	defer c.logMu.Unlock()
	line := fmt.Sprintf(format, args...)
	if len(line) < 8 || line[:8] != "remote: " {
		line = "remote: " + line
	}
	fmt.Fprintln(c.opts.Log, scrub(line, c.opts.APIKey))
}
