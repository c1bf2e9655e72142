package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// scanner walks a JSON document in one pass without building it, so that a
// response's vectors go straight from its bytes into float32s. It checks the
// structure (brackets, quotes, commas, colons) of everything it reads or
// skips; a number is any run of characters up to the next delimiter, checked
// when it is parsed.
type scanner struct {
	b []byte
	i int
}

// errorf describes a syntax error at the current position.
func (s *scanner) errorf(format string, args ...any) error {
	return fmt.Errorf("decoding the response at byte %d of %d: %s", s.i, len(s.b), fmt.Sprintf(format, args...))
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
	if s.i == len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// expect consumes byte c after white space.
func (s *scanner) expect(c byte) error {
	if got := s.peek(); got != c {
		if got == 0 {
			return s.errorf("unexpected end, want %q", c)
		}
		return s.errorf("found %q, want %q", got, c)
	}
	s.i++
	return nil
}

// end checks that nothing but white space is left.
func (s *scanner) end() error {
	if s.peek() != 0 {
		return s.errorf("data after the end of the document")
	}
	return nil
}

// object calls field for each key of an object; field must consume the value.
func (s *scanner) object(field func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or '}' in an object")
		}
	}
}

// array calls elem for each element of an array, counted from 0; elem must
// consume the element.
func (s *scanner) array(elem func(k int) error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for k := 0; ; k++ {
		if err := elem(k); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		default:
			return s.errorf("want ',' or ']' in an array")
		}
	}
}

// str reads a string and returns its content, unescaped (invalid UTF-8
// replaced, as encoding/json does).
func (s *scanner) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start, escaped := s.i, false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '\\':
			escaped = true
			s.i += 2
			continue
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !escaped && utf8.Valid(raw) {
				return raw, nil
			}
			var out string
			if err := json.Unmarshal(s.b[start-1:s.i], &out); err != nil {
				return nil, s.errorf("bad string: %v", err)
			}
			return []byte(out), nil
		case c < 0x20:
			return nil, s.errorf("control character in a string")
		}
		s.i++
	}
	return nil, s.errorf("unexpected end in a string")
}

// token reads a number or a literal (true, false, null, NaN, Infinity):
// the bytes up to the next delimiter.
func (s *scanner) token() ([]byte, error) {
	s.peek()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == ',' || c == ']' || c == '}' || c == ':' || isSpace(c) {
			break
		}
		if c == '"' || c == '[' || c == '{' {
			return nil, s.errorf("found %q inside a value", c)
		}
		s.i++
	}
	if s.i == start {
		if s.i == len(s.b) {
			return nil, s.errorf("unexpected end, want a value")
		}
		return nil, s.errorf("found %q, want a value", s.b[s.i])
	}
	return s.b[start:s.i], nil
}

// skip consumes one value of any kind.
func (s *scanner) skip() error {
	switch s.peek() {
	case '{':
		return s.object(func([]byte) error { return s.skip() })
	case '[':
		return s.array(func(int) error { return s.skip() })
	case '"':
		_, err := s.str()
		return err
	}
	_, err := s.token()
	return err
}

// integer reads a whole number (written with or without a fraction).
func (s *scanner) integer() (int64, error) {
	tok, err := s.token()
	if err != nil {
		return 0, err
	}
	if n, err := strconv.ParseInt(string(tok), 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != float64(int64(f)) {
		return 0, s.errorf("%s is not a whole number", excerpt(tok))
	}
	return int64(f), nil
}

// isNull consumes a null if one comes next.
func (s *scanner) isNull() bool {
	if s.peek() == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// vector appends the values of a vector to dst: an array of numbers (NaN
// and Infinity as Python writes them are read, then refused as not finite)
// or a string of base64 little-endian float32.
func (s *scanner) vector(dst []float32, scratch *[]byte) ([]float32, error) {
	switch s.peek() {
	case '"':
		start := s.i
		if _, err := s.str(); err != nil {
			return dst, err
		}
		return appendBase64(dst, s.b[start:s.i], scratch)
	case '[':
	case 'n':
		if s.isNull() {
			return dst, fmt.Errorf("no embedding")
		}
		fallthrough
	default:
		start := s.i
		s.skip()
		return dst, fmt.Errorf("embedding %s is neither an array of numbers nor a base64 string", excerpt(s.b[start:s.i]))
	}
	err := s.array(func(int) error {
		if c := s.peek(); c == '"' || c == '[' || c == '{' {
			start := s.i
			s.skip()
			return fmt.Errorf("value %d is not a number: %s", len(dst), excerpt(s.b[start:s.i]))
		}
		tok, err := s.token()
		if err != nil {
			return err
		}
		if c := tok[0]; c != '-' && c != 'N' && c != 'I' && (c < '0' || c > '9') {
			return fmt.Errorf("value %d is not a number: %s", len(dst), excerpt(tok))
		}
		v, err := strconv.ParseFloat(string(tok), 32)
		if err != nil {
			return fmt.Errorf("value %d (%s) does not fit a float32", len(dst), excerpt(tok))
		}
		dst = append(dst, float32(v))
		return nil
	})
	return dst, err
}
