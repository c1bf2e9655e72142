package tokenizer

import (
	"unicode/utf8"
)

// span is a byte range [start, end) of the original text.
type span struct{ start, end int32 }

// normStr is a piece of normalised text together with its alignment: for
// every byte of text, align holds the byte range of the original input that
// byte came from. All bytes of one normalised character share one span, as in
// the Hugging Face NormalizedString.
type normStr struct {
	text  []byte
	align []span
}

// newNormStr builds the identity alignment for s[from:to]; offsets are
// absolute positions in s. Each byte of an invalid UTF-8 sequence becomes
// U+FFFD aligned to that byte alone.
func newNormStr(sc *scratch, s string, from, to int) normStr {
	n := sc.next()
	for i := from; i < to; {
		c := s[i]
		if c < utf8.RuneSelf {
			n.text = append(n.text, c)
			n.align = append(n.align, span{int32(i), int32(i + 1)})
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:to])
		if r == utf8.RuneError && size <= 1 {
			size = 1
			n.appendRune(utf8.RuneError, span{int32(i), int32(i + 1)})
		} else {
			sp := span{int32(i), int32(i + size)}
			n.text = append(n.text, s[i:i+size]...)
			for k := 0; k < size; k++ {
				n.align = append(n.align, sp)
			}
		}
		i += size
	}
	sc.keep(n)
	return n
}

func (n *normStr) appendRune(r rune, sp span) {
	if r < utf8.RuneSelf {
		n.text = append(n.text, byte(r))
		n.align = append(n.align, sp)
		return
	}
	k := len(n.text)
	n.text = utf8.AppendRune(n.text, r)
	for ; k < len(n.text); k++ {
		n.align = append(n.align, sp)
	}
}

// orig maps the normalised byte range [s, e) to the original byte range, the
// way Hugging Face converts offsets: start of the first byte, end of the last.
func (n *normStr) orig(s, e int) span {
	if s >= e {
		if s < len(n.align) {
			return span{n.align[s].start, n.align[s].start}
		}
		if len(n.align) > 0 {
			last := n.align[len(n.align)-1].end
			return span{last, last}
		}
		return span{}
	}
	return span{n.align[s].start, n.align[e-1].end}
}

// origStart is the original offset of the start of the piece (0 if empty).
func (n *normStr) origStart() int32 {
	if len(n.align) == 0 {
		return 0
	}
	return n.align[0].start
}

// sub returns a view of bytes [s, e).
func (n *normStr) sub(s, e int) normStr {
	return normStr{text: n.text[s:e:e], align: n.align[s:e:e]}
}

// mapChars rebuilds n by calling f for every character; every rune f emits
// takes the alignment of the character it came from, and a character for
// which f emits nothing is removed. This is Hugging Face's transform for
// changes of 0 and +1 within one character (NFD, lowercase, filter, map).
func (n *normStr) mapChars(sc *scratch, f func(r rune, emit func(rune))) {
	out := sc.next()
	var cur span
	emit := func(r rune) { out.appendRune(r, cur) }
	for i := 0; i < len(n.text); {
		r, size := utf8.DecodeRune(n.text[i:])
		cur = n.align[i]
		f(r, emit)
		i += size
	}
	sc.keep(out)
	*n = out
}

// change is one output character of a Hugging Face transformation: delta 0
// replaces the next input character, +1 inserts a character, -k replaces the
// next input character and removes k more.
type change struct {
	r     rune
	delta int
}

// transform is Hugging Face's NormalizedString::transform over the whole
// string: skip removes that many characters first; a replacing character
// takes the alignment of the character it replaces, an inserted one takes the
// alignment of the byte before the current position.
func (n *normStr) transform(sc *scratch, items []change, skip int) {
	out := sc.next()
	pos := 0
	next := func() int { // size of the next input char, consumed
		if pos >= len(n.text) {
			return 0
		}
		_, size := utf8.DecodeRune(n.text[pos:])
		pos += size
		return size
	}
	for ; skip > 0; skip-- {
		next()
	}
	for _, it := range items {
		var sp span
		if it.delta > 0 {
			if pos >= 1 {
				sp = n.align[pos-1]
			}
		} else {
			if pos < len(n.align) {
				sp = n.align[pos]
			} else if pos >= 1 {
				sp = n.align[pos-1]
			}
			next()
			for k := it.delta; k < 0; k++ {
				next()
			}
		}
		out.appendRune(it.r, sp)
	}
	sc.keep(out)
	*n = out
}
