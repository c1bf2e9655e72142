package remote

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Limits on what a server controls. A response body is read up to a cap
// derived from the request (texts and dimensions asked for), so that a
// broken or hostile server cannot make the client hold more memory than the
// vectors it asked for, with a generous margin for JSON.
const (
	// maxDimsUnknown is the vector size assumed before the first response
	// fixes it: larger than any embedding model served today.
	maxDimsUnknown = 16384
	// floatBytes is the most bytes one float takes in a JSON array, with its
	// separator: "-1.2345678901234567e-05, " is 25.
	floatBytes = 32
	// itemOverhead is the bytes allowed per vector around its values
	// ({"object": "embedding", "index": 12, "embedding": ...}).
	itemOverhead = 1 << 10
	// bodyOverhead is the bytes allowed per response around its vectors
	// (model, usage, whitespace).
	bodyOverhead = 64 << 10
	// errorBodyLimit is the most bytes of an error response read: enough for
	// any server's message (kept to 500 bytes), far from a flood.
	errorBodyLimit = 8 << 10
	// infoBodyLimit is the most bytes of TEI's GET /info read.
	infoBodyLimit = 64 << 10
	// connectTimeout caps the TCP connection (and TLS handshake) of a
	// request, within Options.Timeout.
	connectTimeout = 30 * time.Second
)

// errTooLarge marks a response body over the client's cap; it wraps
// ErrResponse.
var errTooLarge = fmt.Errorf("response body too large: %w", ErrResponse)

// bodyLimit returns the most bytes of a successful response to a request of
// n texts, for vectors of dims values (0: not known yet) in encoding enc.
func bodyLimit(n, dims int, enc Encoding) int64 {
	if dims <= 0 {
		dims = maxDimsUnknown
	}
	per := int64(dims) * floatBytes
	if enc == Base64 {
		per = (int64(dims)*4+2)/3*4 + 16 // base64 of 4 bytes per float, JSON escapes aside
	}
	return int64(n)*(per+itemOverhead) + bodyOverhead
}

// readLimited reads r into buf, at most limit bytes. It reports whether the
// body was longer than limit; what was read stays in buf.
func readLimited(buf *bytes.Buffer, r io.Reader, limit int64) (over bool, err error) {
	buf.Reset()
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return false, err
	}
	if n > limit {
		buf.Truncate(int(limit))
		return true, nil
	}
	return false, nil
}

// newTransport returns the transport of a Client's own HTTP client: a
// connection within connectTimeout, response headers within timeout (the
// per-request context also bounds the body), idle connections per host
// for the requests in flight.
func newTransport(timeout time.Duration, idle int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = idle
	tr.DialContext = (&net.Dialer{Timeout: min(timeout, connectTimeout), KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = min(timeout, connectTimeout)
	tr.ResponseHeaderTimeout = timeout
	return tr
}

// Redact returns s, a URL or a model spec (KIND:URL[#MODEL]), with what may
// be a secret masked: the password of its userinfo and every value of its
// query string become "xxxxx". Every message of this package and of the
// command line shows URLs through it.
func Redact(s string) string {
	prefix, rest := "", s
	if kind, after, ok := strings.Cut(s, ":"); ok && !strings.HasPrefix(after, "//") {
		prefix, rest = kind+":", after
	}
	u, err := url.Parse(strings.TrimSpace(rest))
	if err != nil {
		return prefix + redactText(rest)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		u.RawQuery = q.Encode()
	}
	return prefix + u.Redacted()
}

// redactText masks what follows '?' and the password before '@' in a string
// that does not parse as a URL.
func redactText(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i+1] + "xxxxx"
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		if start := strings.Index(s, "://"); start >= 0 && start+3 < at {
			if colon := strings.IndexByte(s[start+3:at], ':'); colon >= 0 {
				s = s[:start+3+colon+1] + "xxxxx" + s[at:]
			}
		}
	}
	return s
}
