package lexical

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// Tokenizer turns texts into terms with one analyzer. It keeps a buffer and
// a cache of the terms of the words it has seen, so that after a while
// analysing a text allocates nothing but the slice it appends to. A
// Tokenizer is not safe for concurrent use: give each goroutine its own
// ([Analyzer.NewTokenizer] is cheap).
type Tokenizer struct {
	an    Analyzer
	word  []byte            // the word being read, lower case
	runes int               // its length in characters
	terms map[string]string // word -> term ("" for a stop word)
}

// maxCached is how many words a Tokenizer remembers; past it the cache
// starts again empty.
const maxCached = 1 << 18

// NewTokenizer returns a Tokenizer for a.
func (a Analyzer) NewTokenizer() *Tokenizer {
	return &Tokenizer{an: a, terms: make(map[string]string)}
}

// Terms returns the terms of text, in order (repeats included). It is
// NewTokenizer().Append(nil, text): for many texts, keep a Tokenizer.
func (a Analyzer) Terms(text string) []string { return a.NewTokenizer().Append(nil, text) }

// Analyzer returns the analyzer t applies.
func (t *Tokenizer) Analyzer() Analyzer { return t.an }

// Append appends the terms of text to dst and returns the extended slice.
//
// The words are those of the regular expression (?u)\b\w\w+\b, which bm25s
// and scikit-learn use, applied to Python's str.lower() of the text: runs of
// two or more word characters (letters, characters with a numeric value, and
// "_", exactly as Python's re defines \w), lower-cased as str.lower does
// (full case mapping: U+0130 becomes "i" and a combining dot, which ends the
// word; U+03A3 becomes a final sigma at the end of a word). Bytes that are
// not valid UTF-8 separate words. Words longer than [MaxTermBytes] are
// dropped. English then drops stop words and stems the rest.
func (t *Tokenizer) Append(dst []string, text string) []string {
	t.word, t.runes = t.word[:0], 0
	lastCased := false // the Final_Sigma look-behind: last non-ignorable character was cased
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			cls := asciiClass[c]
			if cls&classWord != 0 {
				if len(t.word) <= MaxTermBytes { // past it the word is dropped: stop growing
					t.word = append(t.word, asciiLower[c])
				}
				t.runes++
			} else {
				dst = t.flush(dst)
			}
			if cls&classIgnorable == 0 {
				lastCased = cls&classCased != 0
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			dst = t.flush(dst)
			lastCased = false
			i++
			continue
		}
		switch r {
		case 0x130: // str.lower: "i" U+0307; U+0307 is not a word character
			t.appendRune('i')
			dst = t.flush(dst)
		case 0x3A3:
			lo := rune(0x3C3)
			if lastCased && !casedFollows(text[i+size:]) {
				lo = 0x3C2
			}
			t.appendRune(lo)
		default:
			if lo := lower(r); unicode.Is(wordTable, lo) {
				t.appendRune(lo)
			} else {
				dst = t.flush(dst)
			}
		}
		if !unicode.Is(sigmaIgnorable, r) {
			lastCased = unicode.Is(sigmaCased, r)
		}
		i += size
	}
	return t.flush(dst)
}

// appendRune adds r to the word being read, unless the word is already too
// long to be kept.
func (t *Tokenizer) appendRune(r rune) {
	if len(t.word) <= MaxTermBytes {
		t.word = utf8.AppendRune(t.word, r)
	}
	t.runes++
}

// flush ends the word being read: a word of two or more characters becomes
// a term unless too long or a stop word.
func (t *Tokenizer) flush(dst []string) []string {
	if t.runes >= 2 && len(t.word) <= MaxTermBytes {
		term, ok := t.terms[string(t.word)] // no allocation
		if !ok {
			term = t.analyse(string(t.word))
		}
		if term != "" {
			dst = append(dst, term)
		}
	}
	t.word, t.runes = t.word[:0], 0
	return dst
}

// analyse returns the term of word ("" for a stop word) and caches it.
func (t *Tokenizer) analyse(word string) string {
	term := word
	if t.an == English {
		if IsStopWord(word) {
			term = ""
		} else {
			term = stem(word)
		}
	}
	if len(t.terms) >= maxCached {
		clear(t.terms)
	}
	t.terms[word] = term
	return term
}

// casedFollows is the Final_Sigma look-ahead: whether the first character
// of s that is not case-ignorable is cased.
func casedFollows(s string) bool {
	for _, r := range s {
		if !unicode.Is(sigmaIgnorable, r) {
			return unicode.Is(sigmaCased, r)
		}
	}
	return false
}

// lower is str.lower for one character r (r not U+0130 or U+03A3).
func lower(r rune) rune {
	if i, ok := slices.BinarySearch(lowerFrom[:], uint32(r)); ok {
		return rune(lowerTo[i])
	}
	return r
}

// ASCII classes, from the generated tables.
const (
	classWord = 1 << iota
	classIgnorable
	classCased
)

var asciiClass, asciiLower = asciiTables()

func asciiTables() (cls, low [utf8.RuneSelf]byte) {
	for c := range rune(utf8.RuneSelf) {
		low[c] = byte(lower(c))
		if unicode.Is(wordTable, lower(c)) {
			cls[c] |= classWord
		}
		if unicode.Is(sigmaIgnorable, c) {
			cls[c] |= classIgnorable
		}
		if unicode.Is(sigmaCased, c) {
			cls[c] |= classCased
		}
	}
	return cls, low
}
