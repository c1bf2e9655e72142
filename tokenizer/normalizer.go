package tokenizer

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites a normalised string in place, keeping its alignment.
type normalizer interface {
	normalize(n *normStr, sc *scratch)
}

// bertNormalizer is Hugging Face's BertNormalizer.
type bertNormalizer struct {
	cleanText, chinese, stripAccents, lowercase bool
}

func (b *bertNormalizer) normalize(n *normStr, sc *scratch) {
	out := sc.next()
	var cur span
	var buf [8]rune
	for i := 0; i < len(n.text); {
		c := n.text[i]
		cur = n.align[i]
		if c < utf8.RuneSelf {
			i++
			if b.cleanText {
				if c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
					continue
				}
				if c == '\t' || c == '\n' || c == '\r' {
					c = ' '
				}
			}
			if b.lowercase && c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			out.text = append(out.text, c)
			out.align = append(out.align, cur)
			continue
		}
		r, size := utf8.DecodeRune(n.text[i:])
		i += size
		if b.cleanText {
			if r == 0xFFFD || isBertControl(r) {
				continue
			}
			if isBertWhitespace(r) {
				r = ' '
			}
		}
		rs := buf[:0]
		pad := b.chinese && isChineseChar(r)
		if b.stripAccents {
			rs = appendNFD(rs, r, false)
			k := 0
			for _, x := range rs {
				if !isBertAccent(x) {
					rs[k] = x
					k++
				}
			}
			rs = rs[:k]
		} else {
			rs = append(rs, r)
		}
		if pad {
			out.appendRune(' ', cur)
		}
		for _, x := range rs {
			if b.lowercase {
				toLower(x, func(y rune) { out.appendRune(y, cur) })
			} else {
				out.appendRune(x, cur)
			}
		}
		if pad {
			out.appendRune(' ', cur)
		}
	}
	sc.keep(out)
	*n = out
}

// appendNFD appends the canonical (or compatibility) decomposition of r as
// Hugging Face's NFD and NFKD compute it: their tables are those of Unicode
// 9.0, which does not decompose U+11938 (assigned in Unicode 13.0).
func appendNFD(dst []rune, r rune, compat bool) []rune {
	if r < utf8.RuneSelf || r == 0x11938 {
		return append(dst, r)
	}
	f := norm.NFD
	if compat {
		f = norm.NFKD
	}
	var b [4]byte
	n := utf8.EncodeRune(b[:], r)
	if f.QuickSpan(b[:n]) == n {
		return append(dst, r)
	}
	for _, x := range f.String(string(r)) {
		dst = append(dst, x)
	}
	return dst
}

type lowercaseNormalizer struct{}

func (lowercaseNormalizer) normalize(n *normStr, sc *scratch) {
	n.mapChars(sc, func(r rune, emit func(rune)) { toLower(r, emit) })
}

type stripAccentsNormalizer struct{}

// StripAccents removes every combining mark (Mn, Mc, Me), unlike the
// strip_accents of BertNormalizer, which removes Mn only.
func (stripAccentsNormalizer) normalize(n *normStr, sc *scratch) {
	n.mapChars(sc, func(r rune, emit func(rune)) {
		if !unicode.Is(unicode.M, r) {
			emit(r)
		}
	})
}

// decomposeNormalizer is NFD or NFKD: one character in, its decomposition
// out, every part aligned to the source character.
type decomposeNormalizer struct{ compat bool }

func (d decomposeNormalizer) normalize(n *normStr, sc *scratch) {
	var buf [32]rune
	n.mapChars(sc, func(r rune, emit func(rune)) {
		for _, x := range appendNFD(buf[:0], r, d.compat) {
			emit(x)
		}
	})
}

// composeNormalizer is NFC or NFKC. Each normalisation segment that changes
// is replaced as a unit (see appendCompose).
type composeNormalizer struct{ compat bool }

func (c composeNormalizer) normalize(n *normStr, sc *scratch) {
	f := norm.NFC
	if c.compat {
		f = norm.NFKC
	}
	if f.IsNormal(n.text) {
		return
	}
	items := sc.items[:0]
	for i := 0; i < len(n.text); {
		j := i + f.NextBoundary(n.text[i:], true)
		if j <= i {
			j = len(n.text)
		}
		seg := n.text[i:j]
		if f.IsNormal(seg) {
			for _, r := range string(seg) {
				items = append(items, change{r, 0})
			}
		} else {
			items = appendCompose(items, utf8.RuneCount(seg), string(f.Bytes(seg)))
		}
		i = j
	}
	sc.items = items
	n.transform(sc, items, 0)
}

// appendCompose appends the changes of a composed segment as the Unicode
// normalisation of Hugging Face reports them: a shorter output removes the
// surplus input characters with its first character, a longer one inserts
// its last characters.
func appendCompose(items []change, oldCount int, s string) []change {
	first := len(items)
	for _, r := range s {
		items = append(items, change{r, 0})
	}
	diff := (len(items) - first) - oldCount
	switch {
	case diff > 0:
		for k := len(items) - diff; k < len(items); k++ {
			items[k].delta = 1
		}
	case diff < 0 && len(items) > first:
		items[first].delta = diff
	}
	return items
}

// appendReplace appends the changes that replace oldCount characters by the
// characters of s, as Hugging Face's Precompiled normalizer counts them.
func appendReplace(items []change, oldCount int, s string) []change {
	first := len(items)
	for _, r := range s {
		items = append(items, change{r, 0})
	}
	diff := (len(items) - first) - oldCount
	switch {
	case diff > 0:
		for k := len(items) - 1; k >= first && k >= len(items)-diff; k-- {
			items[k].delta = 1
		}
	case diff < 0:
		if len(items) > 0 {
			items[len(items)-1].delta += diff
		}
	}
	return items
}

// replaceNormalizer is Replace with a literal string or a regular expression.
type replaceNormalizer struct {
	literal string
	re      *regexp.Regexp
	content string
}

func (p *replaceNormalizer) matches(s []byte) [][]int {
	if p.re != nil {
		return p.re.FindAllIndex(s, -1)
	}
	if p.literal == "" {
		return nil
	}
	var m [][]int
	str := string(s)
	for i := 0; i < len(str); {
		k := strings.Index(str[i:], p.literal)
		if k < 0 {
			break
		}
		m = append(m, []int{i + k, i + k + len(p.literal)})
		i += k + len(p.literal)
	}
	return m
}

func (p *replaceNormalizer) normalize(n *normStr, sc *scratch) {
	ms := p.matches(n.text)
	if len(ms) == 0 {
		return
	}
	out := sc.next()
	last := 0
	for _, m := range ms {
		s, e := m[0], m[1]
		if s == e {
			continue
		}
		out.text = append(out.text, n.text[last:s]...)
		out.align = append(out.align, n.align[last:s]...)
		// Inserted characters share the alignment of the byte before them:
		// the last byte of the removed match.
		sp := n.align[e-1]
		for _, r := range p.content {
			out.appendRune(r, sp)
		}
		last = e
	}
	out.text = append(out.text, n.text[last:]...)
	out.align = append(out.align, n.align[last:]...)
	sc.keep(out)
	*n = out
}

// prependNormalizer is Prepend: the string goes before a non-empty text,
// aligned to its first character.
type prependNormalizer struct{ prepend string }

func (p *prependNormalizer) normalize(n *normStr, sc *scratch) {
	if len(n.text) == 0 || p.prepend == "" {
		return
	}
	sp := n.align[0]
	out := sc.next()
	for _, r := range p.prepend {
		out.appendRune(r, sp)
	}
	out.text = append(out.text, n.text...)
	out.align = append(out.align, n.align...)
	sc.keep(out)
	*n = out
}

// stripNormalizer is Strip: whitespace removed from the left and/or right.
type stripNormalizer struct{ left, right bool }

func (p *stripNormalizer) normalize(n *normStr, _ *scratch) {
	s, e := 0, len(n.text)
	if p.left {
		for s < e {
			r, size := utf8.DecodeRune(n.text[s:e])
			if !isWhitespace(r) {
				break
			}
			s += size
		}
	}
	if p.right {
		for e > s {
			r, size := utf8.DecodeLastRune(n.text[s:e])
			if !isWhitespace(r) {
				break
			}
			e -= size
		}
	}
	*n = n.sub(s, e)
}

type sequenceNormalizer []normalizer

func (s sequenceNormalizer) normalize(n *normStr, sc *scratch) {
	for _, x := range s {
		x.normalize(n, sc)
	}
}
