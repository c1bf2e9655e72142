package corpus

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// A JSONL line is one flat JSON object of which only three keys matter. The
// scanner below reads just those values and skips the others (such as
// BEIR's "metadata") without building them, several times faster than
// encoding/json into a map. Skipped values are checked for balanced
// brackets and quotes, not fully validated; the three wanted values are
// decoded exactly as encoding/json decodes them (the fuzz test compares the
// two).

// jsonField is the value of one wanted key.
type jsonField struct {
	present bool
	null    bool
	isStr   bool
	num     string // the literal of a number value
	str     string
}

var errSyntax = errors.New("malformed JSON")

type scanner struct {
	b   []byte
	i   int
	buf []byte // scratch for strings with escapes
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) fail(what string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("%s at end of line: %w", what, errSyntax)
	}
	return fmt.Errorf("%s at byte %d: %w", what, s.i, errSyntax)
}

// scanObject reads the object in line and fills out[k] for keys[k].
func (s *scanner) scanObject(line []byte, keys *[3]string, out *[3]jsonField) error {
	*out = [3]jsonField{}
	s.b, s.i = line, 0
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.fail("want '{'")
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return s.end()
	}
	for {
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return s.fail("want a key")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.fail("want ':'")
		}
		s.i++
		s.ws()
		k := -1
		for j := range keys {
			if key == keys[j] {
				k = j
			}
		}
		if k >= 0 {
			if err := s.value(&out[k]); err != nil {
				return err
			}
		} else if err := s.skip(); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("want ',' or '}'")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return s.end()
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.fail("text after the object")
	}
	return nil
}

// value reads a wanted value: a string, null or a number.
func (s *scanner) value(f *jsonField) error {
	*f = jsonField{present: true}
	if s.i >= len(s.b) {
		return s.fail("want a value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		str, err := s.str()
		f.isStr, f.str = true, str
		return err
	case c == 'n':
		if !s.lit("null") {
			return s.fail("bad literal")
		}
		f.null = true
		return nil
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.i
		for s.i < len(s.b) && isNumByte(s.b[s.i]) {
			s.i++
		}
		f.num = string(s.b[start:s.i])
		if _, err := strconv.ParseFloat(f.num, 64); err != nil {
			return s.fail("bad number")
		}
		return nil
	}
	start := s.i
	if err := s.skip(); err != nil {
		return err
	}
	f.num = string(s.b[start:min(s.i, start+40)])
	return nil
}

func isNumByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i >= len(l) && string(s.b[s.i:s.i+len(l)]) == l {
		s.i += len(l)
		return true
	}
	return false
}

// skip passes over any value.
func (s *scanner) skip() error {
	if s.i >= len(s.b) {
		return s.fail("want a value")
	}
	switch c := s.b[s.i]; c {
	case '"':
		return s.skipStr()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if err := s.skipStr(); err != nil {
					return err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return nil
				}
			}
			s.i++
		}
		return s.fail("unclosed object or array")
	case 't':
		if s.lit("true") {
			return nil
		}
	case 'f':
		if s.lit("false") {
			return nil
		}
	case 'n':
		if s.lit("null") {
			return nil
		}
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			for s.i < len(s.b) && isNumByte(s.b[s.i]) {
				s.i++
			}
			return nil
		}
	}
	return s.fail("want a value")
}

func (s *scanner) skipStr() error {
	s.i++ // opening quote
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return nil
		}
		s.i++
	}
	return s.fail("unterminated string")
}

// str decodes the string starting at the quote at s.i.
func (s *scanner) str() (string, error) {
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '"' {
			out := string(s.b[start:s.i])
			s.i++
			return out, nil
		}
		if c == '\\' {
			return s.strSlow(start)
		}
		if c < 0x20 {
			return "", s.fail("control character in string")
		}
		s.i++
	}
	return "", s.fail("unterminated string")
}

// strSlow decodes a string with escapes; s.i is at the first backslash.
func (s *scanner) strSlow(start int) (string, error) {
	s.buf = append(s.buf[:0], s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return string(s.buf), nil
		case c < 0x20:
			return "", s.fail("control character in string")
		case c != '\\':
			s.buf = append(s.buf, c)
			s.i++
			continue
		}
		if s.i+1 >= len(s.b) {
			return "", s.fail("unterminated string")
		}
		e := s.b[s.i+1]
		s.i += 2
		switch e {
		case '"', '\\', '/':
			s.buf = append(s.buf, e)
		case 'b':
			s.buf = append(s.buf, '\b')
		case 'f':
			s.buf = append(s.buf, '\f')
		case 'n':
			s.buf = append(s.buf, '\n')
		case 'r':
			s.buf = append(s.buf, '\r')
		case 't':
			s.buf = append(s.buf, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return "", s.fail("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A valid pair makes one rune; anything else is U+FFFD,
				// as in encoding/json.
				save := s.i
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					if r2, ok := s.hex4(); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							s.buf = utf8.AppendRune(s.buf, dec)
							continue
						}
					}
				}
				s.i = save
				r = utf8.RuneError
			}
			s.buf = utf8.AppendRune(s.buf, r)
		default:
			return "", s.fail("bad escape")
		}
	}
	return "", s.fail("unterminated string")
}

func (s *scanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}
