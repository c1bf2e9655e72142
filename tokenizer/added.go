package tokenizer

import (
	"fmt"
	"sort"
	"unicode"
	"unicode/utf8"
)

// addedToken is one entry of added_tokens as matched in text.
type addedToken struct {
	id                         int32
	content                    string // normalised content for normalized tokens
	singleWord, lstrip, rstrip bool
}

// addedVocab finds added tokens in text, leftmost-longest, as Hugging
// Face's AddedVocabulary does: tokens with normalized=false are found in the
// original text, the others in the normalised text.
type addedVocab struct {
	byContent map[string]int32
	content   map[int32]string
	raw, norm matcher
}

// matcher holds tokens indexed by first byte, longest first.
type matcher struct {
	first [256][]addedToken
	any   bool
}

func (m *matcher) add(t addedToken) {
	if t.content == "" {
		return
	}
	m.any = true
	b := t.content[0]
	m.first[b] = append(m.first[b], t)
	sort.SliceStable(m.first[b], func(i, j int) bool { return len(m.first[b][i].content) > len(m.first[b][j].content) })
}

// at returns the longest token starting at s[i:].
func (m *matcher) at(s []byte, i int) (addedToken, bool) {
	for _, t := range m.first[s[i]] {
		if len(s)-i >= len(t.content) && string(s[i:i+len(t.content)]) == t.content {
			return t, true
		}
	}
	return addedToken{}, false
}

// newAddedVocab registers the added tokens in file order. As in Hugging
// Face, the id in the file is not used: a token takes its id in the added
// tokens or the model vocabulary, else the next id after the vocabulary and
// the added tokens so far.
func newAddedVocab(list []addedTokenJSON, norm normalizer, m model) (*addedVocab, error) {
	v := &addedVocab{byContent: make(map[string]int32, len(list)), content: make(map[int32]string, len(list))}
	size := int32(m.vocabSize())
	maxID := int32(-1)
	for i, a := range list {
		if a.Content == "" {
			return nil, invalid(fmt.Sprintf("added_tokens[%d]", i), "empty content")
		}
		id, ok := v.byContent[a.Content]
		if !ok {
			id, ok = m.tokenToID(a.Content)
		}
		if !ok {
			id = size
			if maxID >= size {
				id = maxID + 1
			}
		}
		if id > maxID {
			maxID = id
		}
		v.byContent[a.Content] = id
		v.content[id] = a.Content
		t := addedToken{id: id, content: a.Content, singleWord: a.SingleWord, lstrip: a.LStrip, rstrip: a.RStrip}
		if !a.Normalized {
			v.raw.add(t)
			continue
		}
		if norm != nil {
			sc := new(scratch)
			n := newNormStr(sc, a.Content, 0, len(a.Content))
			norm.normalize(&n, sc)
			t.content = string(n.text)
		}
		v.norm.add(t)
	}
	return v, nil
}

// segment is a byte range of the original text, with the id of the added
// token it holds or -1.
type segment struct {
	s, e int
	id   int32
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// findAll cuts text into plain runs and added tokens.
func (m *matcher) findAll(text []byte, f func(s, e int, id int32)) {
	start := 0 // end of the previous token
	for i := 0; i < len(text); {
		t, ok := m.at(text, i)
		if !ok {
			i++
			continue
		}
		s, e := i, i+len(t.content)
		i = e
		if t.singleWord {
			before, _ := utf8.DecodeLastRune(text[:s])
			after, _ := utf8.DecodeRune(text[e:])
			if (s > 0 && isWordRune(before)) || (e < len(text) && isWordRune(after)) {
				continue
			}
		}
		if t.lstrip {
			ns := s
			for ns > start {
				r, size := utf8.DecodeLastRune(text[:ns])
				if !isWhitespace(r) {
					break
				}
				ns -= size
			}
			s = ns
		}
		if t.rstrip {
			for e < len(text) {
				r, size := utf8.DecodeRune(text[e:])
				if !isWhitespace(r) {
					break
				}
				e += size
			}
			i = e
		}
		if s > start {
			f(start, s, -1)
		}
		f(s, e, t.id)
		start = e
	}
	if start < len(text) {
		f(start, len(text), -1)
	}
}

// splitRaw appends the segments of text split on non-normalised tokens.
func (v *addedVocab) splitRaw(dst []segment, text string) []segment {
	if !v.raw.any {
		if len(text) > 0 {
			dst = append(dst, segment{0, len(text), -1})
		}
		return dst
	}
	v.raw.findAll([]byte(text), func(s, e int, id int32) { dst = append(dst, segment{s, e, id}) })
	return dst
}

// splitNormalized calls f for each part of n split on normalised tokens:
// plain parts with id -1, tokens with their id and normalised range.
func (v *addedVocab) splitNormalized(n normStr, f func(piece normStr, id int32, s, e int)) {
	if !v.norm.any {
		f(n, -1, 0, len(n.text))
		return
	}
	v.norm.findAll(n.text, func(s, e int, id int32) {
		if id >= 0 {
			f(n, id, s, e)
		} else {
			f(n.sub(s, e), -1, 0, e-s)
		}
	})
}
