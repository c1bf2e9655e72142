package remote

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors. Errors returned by this package wrap one of them, so callers
// can test the kind of failure with [errors.Is] while the message names the
// texts, the endpoint and what the server said.
var (
	// ErrOptions: the Options are unusable (no endpoint, a malformed URL, a
	// setting the API kind does not have, a negative limit).
	ErrOptions = errors.New("bad options")
	// ErrInput: a text cannot be sent as it is (it is not valid UTF-8, which
	// JSON would silently replace).
	ErrInput = errors.New("bad input")
	// ErrStatus: the server answered with an error status, and retries (if the
	// status allowed them) did not help.
	ErrStatus = errors.New("error status from server")
	// ErrTooLong: the server refused an input as longer than its maximum
	// (TEI's 413 "`inputs` must have less than N tokens", an OpenAI-compatible
	// 400 "maximum context length").
	ErrTooLong = errors.New("input longer than the server's maximum")
	// ErrTransport: no response came (connection refused or cut, a request
	// timeout), and retries did not help.
	ErrTransport = errors.New("request failed")
	// ErrResponse: a response could not be decoded or broke the API's rules
	// (wrong number of vectors, an index out of range or repeated, a
	// non-finite value, an empty vector).
	ErrResponse = errors.New("malformed response")
	// ErrMismatch: responses disagree with each other or with the Options: a
	// vector of other dimensions than the first response's (or than
	// Options.Dimensions), another model reported by another endpoint.
	ErrMismatch = errors.New("inconsistent responses")
	// ErrTokenCount: the prompt tokens a server reported for a request differ
	// from the caller's own count (see CheckPromptTokens).
	ErrTokenCount = errors.New("prompt token count differs")
)

// RequestError is the error of one request (one batch of texts) that failed
// for good. It wraps a sentinel (ErrStatus, ErrTooLong, ErrTransport,
// ErrResponse, ErrMismatch) and, where there is one, the underlying cause
// (a context error, a *url.Error), for errors.Is and errors.As. Its text never
// holds the API key: the server's message is scrubbed of it and the endpoint
// is shown without credentials.
type RequestError struct {
	First, Last int    // positions of the batch's first and last text in the call's texts
	Endpoint    string // URL of the last attempt, credentials removed
	Status      int    // HTTP status of the last attempt; 0 when no response came
	Message     string // what the server said, or what went wrong on the way
	Attempts    int    // requests sent for the batch, retries included
	Kind        error  // the sentinel
	cause       error
}

// Error describes the batch, the endpoint, the status and the server's message.
func (e *RequestError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "remote: texts %d..%d at %s: ", e.First, e.Last, e.Endpoint)
	if e.Status != 0 {
		fmt.Fprintf(&b, "status %d", e.Status)
		if text := http.StatusText(e.Status); text != "" {
			b.WriteString(" " + strings.ToLower(text))
		}
	} else {
		b.WriteString("no response")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Kind != nil {
		b.WriteString(": ")
		b.WriteString(e.Kind.Error())
	}
	return b.String()
}

// Unwrap returns the sentinel and the cause, for errors.Is and errors.As.
func (e *RequestError) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.cause != nil {
		out = append(out, e.cause)
	}
	return out
}

// scrub removes the API key from s; it is applied to every text a server or
// the transport produced before it goes into an error or a log line.
func scrub(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[api key removed]")
}
