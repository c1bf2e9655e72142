package remote

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decoded is what one response said, its vectors left in the worker's vals.
type decoded struct {
	dims   int
	model  string
	tokens int64 // usage.prompt_tokens; -1 when not reported
}

// decodeError marks a decoding failure as ErrResponse, a dimension
// disagreement as ErrMismatch.
type decodeError struct {
	msg  string
	kind error
}

// Error returns the description.
func (e *decodeError) Error() string { return e.msg }

// badResponse makes an ErrResponse decodeError.
func badResponse(format string, args ...any) error {
	return &decodeError{msg: fmt.Sprintf(format, args...), kind: ErrResponse}
}

// accept decodes and checks the response of batch b in w.resp, then stores
// its rows, its usage and the statistics.
func (c *Client) accept(j *call, b, ep int, w *worker, attempts int) error {
	s := j.batches[b]
	want, wantWhy := c.wantDims()
	var d decoded
	var err error
	if c.opts.API == TEI {
		d, err = decodeTEI(w.resp.Bytes(), s, want, wantWhy, w)
	} else {
		d, err = decodeOpenAI(w.resp.Bytes(), s, want, wantWhy, w)
	}
	if err == nil {
		err = c.settle(d, ep)
	}
	if err != nil {
		c.noteError(ep)
		c.noteFailed()
		kind := ErrResponse
		if de, ok := err.(*decodeError); ok {
			kind = de.kind
		}
		return &RequestError{First: s.lo, Last: s.hi - 1, Endpoint: c.endpoints[ep].shown, Status: w.status,
			Message: scrub(err.Error(), c.opts.APIKey), Attempts: attempts, Kind: kind}
	}
	copy(j.rows(s, d.dims), w.vals[:(s.hi-s.lo)*d.dims])
	j.usage[b] = Usage{First: s.lo, Last: s.hi - 1, Bytes: s.bytes, PromptTokens: d.tokens,
		Endpoint: c.endpoints[ep].shown, Attempts: attempts}
	c.noteBatch(ep, s, d.tokens)
	return nil
}

// wantDims returns the dimensions every vector must have (0 when not yet
// known) and where that requirement comes from.
func (c *Client) wantDims() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.opts.Dimensions > 0:
		return c.opts.Dimensions, "Options.Dimensions"
	case c.dims > 0:
		return c.dims, "the first response"
	}
	return 0, ""
}

// settle records the dimensions and the model of a response, or reports
// that they disagree with earlier ones.
func (c *Client) settle(d decoded, ep int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dims == 0 {
		c.dims = d.dims
	} else if c.dims != d.dims {
		return &decodeError{msg: fmt.Sprintf("vectors of %d dims, earlier responses had %d", d.dims, c.dims), kind: ErrMismatch}
	}
	if d.model == "" {
		return nil
	}
	if c.model == "" {
		c.model, c.modelFrom = d.model, c.endpoints[ep].shown
	} else if c.model != d.model {
		return &decodeError{msg: fmt.Sprintf("model %q, but %s reported %q", d.model, c.modelFrom, c.model), kind: ErrMismatch}
	}
	return nil
}

// decodeOpenAI decodes an OpenAI-compatible response to batch s into w.vals,
// each vector at the row its "index" names (its position when it has none).
func decodeOpenAI(body []byte, s span, want int, wantWhy string, w *worker) (decoded, error) {
	sc := scanner{b: body}
	d := decoded{tokens: -1}
	n := s.hi - s.lo
	count, sawData := 0, false
	w.seen = resetBools(w.seen, n)
	err := sc.object(func(key []byte) error {
		if sc.isNull() {
			return nil
		}
		switch string(key) {
		case "data":
			sawData = true
			return sc.array(func(k int) error {
				count++
				return w.openaiItem(&sc, k, s, &want, wantWhy)
			})
		case "model":
			m, err := sc.str()
			d.model = string(m)
			return err
		case "usage":
			return sc.object(func(key []byte) error {
				if string(key) != "prompt_tokens" || sc.isNull() {
					return sc.skip()
				}
				var err error
				d.tokens, err = sc.integer()
				return err
			})
		}
		return sc.skip()
	})
	if err == nil {
		err = sc.end()
	}
	switch {
	case err != nil:
		return decoded{}, asDecodeError(err)
	case !sawData:
		return decoded{}, badResponse("no \"data\" array in the response (body %s)", excerpt(body))
	case count != n:
		return decoded{}, badResponse("%d vectors for %d texts", count, n)
	}
	d.dims = want
	return d, nil
}

// openaiItem decodes item k of a response's "data" and places its vector.
func (w *worker) openaiItem(sc *scanner, k int, s span, want *int, wantWhy string) error {
	n := s.hi - s.lo
	idx, have := int64(k), false
	err := sc.object(func(key []byte) error {
		switch string(key) {
		case "index":
			if sc.isNull() {
				return nil
			}
			var err error
			idx, err = sc.integer()
			return err
		case "embedding":
			have = true
			var err error
			if w.tmp, err = sc.vector(w.tmp[:0], &w.raw); err != nil {
				return badResponse("text %d: %v", s.lo+int(idx), err)
			}
			return nil
		}
		return sc.skip()
	})
	switch {
	case err != nil:
		return err
	case idx < 0 || idx >= int64(n):
		return badResponse("item %d has index %d, outside 0..%d", k, idx, n-1)
	case w.seen[idx]:
		return badResponse("index %d appears twice", idx)
	case !have:
		return badResponse("text %d: no embedding", s.lo+int(idx))
	}
	w.seen[idx] = true
	return w.place(int(idx), s, want, wantWhy)
}

// decodeTEI decodes a TEI /embed response, an array of vectors in input
// order, to batch s into w.vals.
func decodeTEI(body []byte, s span, want int, wantWhy string, w *worker) (decoded, error) {
	sc := scanner{b: body}
	n := s.hi - s.lo
	count := 0
	err := sc.array(func(k int) error {
		count++
		if k >= n {
			return sc.skip()
		}
		var err error
		if w.tmp, err = sc.vector(w.tmp[:0], &w.raw); err != nil {
			return badResponse("text %d: %v", s.lo+k, err)
		}
		return w.place(k, s, &want, wantWhy)
	})
	if err == nil {
		err = sc.end()
	}
	switch {
	case err != nil:
		return decoded{}, asDecodeError(err)
	case count != n:
		return decoded{}, badResponse("%d vectors for %d texts", count, n)
	}
	return decoded{dims: want, tokens: -1}, nil
}

// asDecodeError makes a scanner's syntax error an ErrResponse.
func asDecodeError(err error) error {
	if _, ok := err.(*decodeError); ok {
		return err
	}
	return badResponse("%v", err)
}

// place checks the vector in w.tmp, of the text at row idx of batch s, and
// copies it into w.vals. The first vector fixes *want when it is 0.
func (w *worker) place(idx int, s span, want *int, wantWhy string) error {
	if len(w.tmp) == 0 {
		return badResponse("text %d: empty vector", s.lo+idx)
	}
	zero := true
	for i, v := range w.tmp {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return badResponse("text %d: value %d is %v", s.lo+idx, i, v)
		}
		zero = zero && v == 0
	}
	if zero { // every score would be 0: no ranking, a silent wrong result
		return badResponse("text %d: all %d values are zero", s.lo+idx, len(w.tmp))
	}
	if *want == 0 {
		*want = len(w.tmp)
	} else if len(w.tmp) != *want {
		if wantWhy == "" {
			wantWhy = "the other vectors of the response"
		}
		return &decodeError{msg: fmt.Sprintf("text %d: vector of %d dims, want %d as %s has", s.lo+idx, len(w.tmp), *want, wantWhy),
			kind: ErrMismatch}
	}
	d, n := *want, s.hi-s.lo
	if len(w.vals) < n*d {
		w.vals = make([]float32, n*d)
	}
	copy(w.vals[idx*d:(idx+1)*d], w.tmp)
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// appendBase64 decodes a JSON string of base64 little-endian float32 into dst.
func appendBase64(dst []float32, raw []byte, scratch *[]byte) ([]float32, error) {
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 { // escaped, as "\/": let encoding/json unescape it
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return dst, err
		}
		s = []byte(str)
	}
	buf := *scratch
	if need := base64.RawStdEncoding.DecodedLen(len(s)); cap(buf) < need { // the larger of the two
		buf = make([]byte, need)
	}
	buf = buf[:cap(buf)]
	n, err := base64.StdEncoding.Decode(buf, s)
	if err != nil {
		if n, err = base64.RawStdEncoding.Decode(buf, s); err != nil {
			return dst, fmt.Errorf("bad base64: %v", err)
		}
	}
	*scratch = buf
	if n%4 != 0 {
		return dst, fmt.Errorf("base64 of %d bytes, not a whole number of float32", n)
	}
	for k := 0; k < n; k += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(buf[k:])))
	}
	return dst, nil
}

func resetBools(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	b = b[:n]
	clear(b)
	return b
}

// excerpt quotes the start of b for an error message.
func excerpt(b []byte) string {
	const limit = 120
	if len(b) <= limit {
		return strconv.Quote(string(b))
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + "..."
}

// serverMessage extracts the error message of an error response: OpenAI's
// {"error": {"message"}}, TEI's {"error": "..."}, the top-level "message" of
// TEI's /v1 route and older vLLM, FastAPI's "detail", or else the body's
// text. The API key is removed and the text kept to one line of at most 500
// bytes.
func serverMessage(body []byte, key string) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &v) == nil {
		for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
			if msg = textOf(raw); msg != "" {
				break
			}
		}
	}
	if msg == "" {
		msg = cutMessage(body)
	}
	msg = strings.Join(strings.Fields(scrub(msg, key)), " ")
	if len(msg) > 500 {
		cut := 500
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "..."
	}
	return msg
}

// cutMessage returns the text of a "message", "error" or "detail" string in
// a body that does not decode (an error body cut at errorBodyLimit), else
// the body itself.
func cutMessage(body []byte) string {
	for _, key := range []string{`"message":"`, `"error":"`, `"detail":"`} {
		if i := bytes.Index(body, []byte(key)); i >= 0 {
			rest := body[i+len(key):]
			if end := bytes.IndexByte(rest, '"'); end >= 0 {
				rest = rest[:end]
			}
			return string(rest)
		}
	}
	return string(body)
}

// textOf returns the text of a JSON string, the "message" of an object, the
// compact JSON of anything else non-empty, or "".
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return ""
}
