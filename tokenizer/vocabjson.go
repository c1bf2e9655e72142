package tokenizer

import (
	"encoding/json"
	"errors"
	"strconv"
)

// Fast readers for the two large parts of a tokenizer.json: the WordPiece
// vocabulary {"piece": id, ...} and the Unigram vocabulary [["piece", score],
// ...]. A 250,000-piece file loads several times faster than through
// reflection; anything unexpected falls back to encoding/json.

var errVocabSyntax = errors.New("vocabulary syntax")

type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a JSON string; escapes are decoded by encoding/json.
func (s *jsonScan) str() (string, error) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", errVocabSyntax
	}
	start := s.i
	s.i++
	escaped := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == '\\' {
			escaped = true
			s.i += 2
			continue
		}
		if c == '"' {
			s.i++
			if !escaped {
				return string(s.b[start+1 : s.i-1]), nil
			}
			var out string
			err := json.Unmarshal(s.b[start:s.i], &out)
			return out, err
		}
		s.i++
	}
	return "", errVocabSyntax
}

// num reads a JSON number as written.
func (s *jsonScan) num() ([]byte, error) {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		return nil, errVocabSyntax
	}
	return s.b[start:s.i], nil
}

// parseWordPieceVocab reads {"piece": id, ...}.
func parseWordPieceVocab(b []byte) (map[string]int32, error) {
	s := &jsonScan{b: b}
	if !s.byte('{') {
		return nil, errVocabSyntax
	}
	m := make(map[string]int32, len(b)/12)
	if s.byte('}') {
		return m, nil
	}
	for {
		k, err := s.str()
		if err != nil {
			return nil, err
		}
		if !s.byte(':') {
			return nil, errVocabSyntax
		}
		n, err := s.num()
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseInt(string(n), 10, 32)
		if err != nil {
			return nil, err
		}
		m[k] = int32(v)
		if s.byte(',') {
			continue
		}
		if s.byte('}') {
			return m, nil
		}
		return nil, errVocabSyntax
	}
}

// parseUnigramVocab reads [["piece", score], ...].
func parseUnigramVocab(b []byte) ([]string, []float64, error) {
	s := &jsonScan{b: b}
	if !s.byte('[') {
		return nil, nil, errVocabSyntax
	}
	var pieces []string
	var scores []float64
	if s.byte(']') {
		return pieces, scores, nil
	}
	for {
		if !s.byte('[') {
			return nil, nil, errVocabSyntax
		}
		p, err := s.str()
		if err != nil {
			return nil, nil, err
		}
		if !s.byte(',') {
			return nil, nil, errVocabSyntax
		}
		n, err := s.num()
		if err != nil {
			return nil, nil, err
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, nil, err
		}
		if !s.byte(']') {
			return nil, nil, errVocabSyntax
		}
		pieces, scores = append(pieces, p), append(scores, f)
		if s.byte(',') {
			continue
		}
		if s.byte(']') {
			return pieces, scores, nil
		}
		return nil, nil, errVocabSyntax
	}
}
