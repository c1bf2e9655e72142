package tokenizer

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// preTokenizer cuts one normalised piece into smaller pieces, appending them
// to dst. A piece is a view or a rewritten copy with its own alignment.
type preTokenizer interface {
	split(dst []normStr, n normStr, sc *scratch) []normStr
}

// behavior is Hugging Face's SplitDelimiterBehavior.
type behavior int

const (
	behRemoved behavior = iota
	behIsolated
	behMergedWithPrevious
	behMergedWithNext
	behContiguous
)

// match is a byte range of a piece and whether it is a delimiter.
type match struct {
	s, e  int
	isDel bool
}

// splitBy cuts n along the delimiter ranges in ms (which, with the non
// delimiters, cover n in order) according to b, dropping empty pieces.
func splitBy(dst []normStr, n normStr, ms []match, b behavior) []normStr {
	switch b {
	case behRemoved:
		for _, m := range ms {
			if !m.isDel && m.e > m.s {
				dst = append(dst, n.sub(m.s, m.e))
			}
		}
	case behIsolated:
		for _, m := range ms {
			if m.e > m.s {
				dst = append(dst, n.sub(m.s, m.e))
			}
		}
	case behMergedWithPrevious:
		start := -1
		for _, m := range ms {
			if start < 0 {
				start = m.s
			}
			if m.isDel {
				if m.e > start {
					dst = append(dst, n.sub(start, m.e))
				}
				start = -1
			}
		}
		if start >= 0 && len(n.text) > start {
			dst = append(dst, n.sub(start, len(n.text)))
		}
	case behMergedWithNext:
		start := 0
		for _, m := range ms {
			if m.isDel && m.s > start {
				dst = append(dst, n.sub(start, m.s))
				start = m.s
			}
		}
		if len(n.text) > start {
			dst = append(dst, n.sub(start, len(n.text)))
		}
	case behContiguous:
		for i := 0; i < len(ms); {
			m := ms[i]
			j := i + 1
			if m.isDel {
				for j < len(ms) && ms[j].isDel {
					m.e = ms[j].e
					j++
				}
			}
			if m.e > m.s {
				dst = append(dst, n.sub(m.s, m.e))
			}
			i = j
		}
	}
	return dst
}

// charMatches lists every character for which pred holds as its own
// delimiter, with the runs between them as non-delimiters.
func charMatches(ms []match, text []byte, pred func(rune) bool) []match {
	last := 0
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(text[i:])
		}
		if pred(r) {
			if i > last {
				ms = append(ms, match{last, i, false})
			}
			ms = append(ms, match{i, i + size, true})
			last = i + size
		}
		i += size
	}
	if last < len(text) {
		ms = append(ms, match{last, len(text), false})
	}
	return ms
}

// bertPreTokenizer splits on whitespace (removed) and isolates punctuation.
type bertPreTokenizer struct{}

func (bertPreTokenizer) split(dst []normStr, n normStr, sc *scratch) []normStr {
	text := n.text
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		var r rune
		size := 1
		var ws, punct bool
		if c < utf8.RuneSelf {
			ws = c == ' ' || (c >= '\t' && c <= '\r')
			punct = !ws && ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
		} else {
			r, size = utf8.DecodeRune(text[i:])
			ws = isWhitespace(r)
			punct = !ws && isPunctuation(r)
		}
		if ws || punct {
			if start >= 0 {
				dst = append(dst, n.sub(start, i))
				start = -1
			}
			if punct {
				dst = append(dst, n.sub(i, i+size))
			}
		} else if start < 0 {
			start = i
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, n.sub(start, len(text)))
	}
	return dst
}

// whitespacePreTokenizer is Whitespace: the pattern \w+|[^\w\s]+.
type whitespacePreTokenizer struct{}

func (whitespacePreTokenizer) split(dst []normStr, n normStr, sc *scratch) []normStr {
	const (
		none = iota
		word
		other
	)
	start, kind := 0, none
	for i := 0; i < len(n.text); {
		r, size := utf8.DecodeRune(n.text[i:])
		k := other
		if isWordChar(r) {
			k = word
		} else if isWhitespace(r) {
			k = none
		}
		if k != kind {
			if kind != none {
				dst = append(dst, n.sub(start, i))
			}
			start, kind = i, k
		}
		i += size
	}
	if kind != none {
		dst = append(dst, n.sub(start, len(n.text)))
	}
	return dst
}

// whitespaceSplit is WhitespaceSplit: split on whitespace, removed.
type whitespaceSplit struct{}

func (whitespaceSplit) split(dst []normStr, n normStr, sc *scratch) []normStr {
	sc.ms = charMatches(sc.ms[:0], n.text, isWhitespace)
	return splitBy(dst, n, sc.ms, behRemoved)
}

type punctuationPreTokenizer struct{ b behavior }

func (p punctuationPreTokenizer) split(dst []normStr, n normStr, sc *scratch) []normStr {
	sc.ms = charMatches(sc.ms[:0], n.text, isPunctuation)
	return splitBy(dst, n, sc.ms, p.b)
}

type digitsPreTokenizer struct{ individual bool }

func (p digitsPreTokenizer) split(dst []normStr, n normStr, sc *scratch) []normStr {
	b := behContiguous
	if p.individual {
		b = behIsolated
	}
	sc.ms = charMatches(sc.ms[:0], n.text, isNumeric)
	return splitBy(dst, n, sc.ms, b)
}

// splitPreTokenizer is Split with a literal or regular-expression pattern.
type splitPreTokenizer struct {
	literal string
	re      *regexp.Regexp
	b       behavior
	invert  bool
}

func (p *splitPreTokenizer) split(dst []normStr, n normStr, sc *scratch) []normStr {
	ms := sc.ms[:0]
	last := 0
	add := func(s, e int) {
		if s > last {
			ms = append(ms, match{last, s, p.invert})
		}
		ms = append(ms, match{s, e, !p.invert})
		last = e
	}
	if p.re != nil {
		for _, m := range p.re.FindAllIndex(n.text, -1) {
			if m[1] > m[0] {
				add(m[0], m[1])
			}
		}
	} else if p.literal != "" {
		str := string(n.text)
		for i := 0; i < len(str); {
			k := strings.Index(str[i:], p.literal)
			if k < 0 {
				break
			}
			add(i+k, i+k+len(p.literal))
			i += k + len(p.literal)
		}
	}
	if last < len(n.text) {
		ms = append(ms, match{last, len(n.text), p.invert})
	}
	sc.ms = ms
	return splitBy(dst, n, ms, p.b)
}

// prependScheme says when Metaspace puts the replacement before a piece.
type prependScheme int

const (
	prependAlways prependScheme = iota
	prependFirst
	prependNever
)

// metaspace is Metaspace: spaces become the replacement character, which is
// prepended per the scheme, and the piece is split before each replacement.
type metaspace struct {
	repl   rune
	scheme prependScheme
	split_ bool
}

func (m *metaspace) split(dst []normStr, n normStr, sc *scratch) []normStr {
	start := sc.arenaStart()
	out := sc.arena
	prepend := false
	if len(n.text) > 0 {
		first, _ := utf8.DecodeRune(n.text)
		switch m.scheme {
		case prependAlways:
			prepend = first != m.repl && first != ' '
		case prependFirst:
			prepend = first != m.repl && first != ' ' && n.origStart() == 0
		}
		// A leading space is replaced first, so the text already starts
		// with the replacement and nothing is prepended.
	}
	if prepend {
		out.appendRune(m.repl, n.align[0])
	}
	for i := 0; i < len(n.text); {
		c := n.text[i]
		if c == ' ' {
			out.appendRune(m.repl, n.align[i])
			i++
			continue
		}
		_, size := utf8.DecodeRune(n.text[i:])
		out.text = append(out.text, n.text[i:i+size]...)
		out.align = append(out.align, n.align[i:i+size]...)
		i += size
	}
	sc.arena = out
	piece := sc.arenaPiece(start)
	if !m.split_ {
		return append(dst, piece)
	}
	sc.ms = charMatches(sc.ms[:0], piece.text, func(r rune) bool { return r == m.repl })
	return splitBy(dst, piece, sc.ms, behMergedWithNext)
}

type sequencePreTokenizer []preTokenizer

func (s sequencePreTokenizer) split(dst []normStr, n normStr, sc *scratch) []normStr {
	cur := append(sc.getSeq(), n)
	for _, p := range s {
		next := sc.getSeq()
		for _, c := range cur {
			next = p.split(next, c, sc)
		}
		sc.putSeq(cur)
		cur = next
	}
	dst = append(dst, cur...)
	sc.putSeq(cur)
	return dst
}
