package remote

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryableStatus reports whether a status is worth another attempt: 429 Too
// Many Requests, 408 Request Timeout and every 5xx. Other 4xx say the request
// itself is wrong and would fail again.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || (code >= 500 && code <= 599)
}

// retryAfter reads how long a server asks to wait before the next attempt:
// Retry-After-Ms (milliseconds, which OpenAI sends beside Retry-After), else
// Retry-After as seconds (fractions accepted) or as an HTTP date. It returns
// -1 when neither is given or readable; a date in the past gives 0.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return -1
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// backoff returns the wait before retry n (1 for the first): the server's
// Retry-After when it gave one, else a random time in [0, min(BackoffMax,
// BackoffBase*2^(n-1))) ("full jitter", so that many clients do not retry in
// step). Either way at most BackoffMax.
func (c *Client) backoff(n int, after time.Duration) time.Duration {
	if after >= 0 {
		return min(after, c.opts.BackoffMax)
	}
	ceil := c.opts.BackoffBase
	for i := 1; i < n && ceil < c.opts.BackoffMax; i++ {
		ceil *= 2
	}
	ceil = min(ceil, c.opts.BackoffMax)
	if ceil <= 0 {
		return 0
	}
	return rand.N(ceil)
}

// isTooLong reports whether an error response refuses an input as longer
// than the server's maximum: TEI's 413 "`inputs` must have less than N
// tokens. Given: M", OpenAI's and vLLM's 400 "This model's maximum context
// length is N tokens ...". TEI's other 413s (a batch over
// max_client_batch_size, a body over --payload-limit) are not.
func isTooLong(code int, msg string) bool {
	if code != http.StatusBadRequest && code != http.StatusRequestEntityTooLarge && code != http.StatusUnprocessableEntity {
		return false
	}
	m := strings.ToLower(msg)
	return (strings.Contains(m, "must have less than") && strings.Contains(m, "tokens")) ||
		strings.Contains(m, "maximum context length")
}
