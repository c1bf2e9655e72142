package tokenizer

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// precompiled is SentencePiece's precompiled character map: a double-array
// trie (darts-clone layout) from UTF-8 strings to offsets in a blob of
// NUL-terminated replacement strings.
type precompiled struct {
	units []uint32
	blob  []byte
	ascii [128]*string // lookup results of single ASCII characters
}

func newPrecompiled(data []byte) (*precompiled, error) {
	if len(data) < 4 {
		return nil, errors.New("charsmap shorter than its 4-byte header")
	}
	size := int(binary.LittleEndian.Uint32(data))
	if size%4 != 0 || 4+size > len(data) {
		return nil, errors.New("charsmap trie size does not fit the data")
	}
	p := &precompiled{units: make([]uint32, size/4), blob: data[4+size:]}
	for i := range p.units {
		p.units[i] = binary.LittleEndian.Uint32(data[4+4*i:])
	}
	if len(p.units) == 0 {
		return nil, errors.New("charsmap trie is empty")
	}
	for c := 0; c < 128; c++ {
		if rep, ok := p.lookup([]byte{byte(c)}); ok {
			p.ascii[c] = &rep
		}
	}
	return p, nil
}

func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }
func unitLabel(u uint32) uint32  { return u & ((1 << 31) | 0xff) }
func unitHasLeaf(u uint32) bool  { return (u>>8)&1 == 1 }
func unitValue(u uint32) uint32  { return u & ((1 << 31) - 1) }

// lookup returns the replacement of the shortest key that is a prefix of s,
// which is what the Hugging Face normalizer uses.
func (p *precompiled) lookup(s []byte) (string, bool) {
	pos := uint32(0)
	n := uint32(len(p.units))
	pos ^= unitOffset(p.units[0])
	for i := 0; i < len(s); i++ {
		c := uint32(s[i])
		if c == 0 {
			break
		}
		pos ^= c
		if pos >= n {
			return "", false
		}
		u := p.units[pos]
		if unitLabel(u) != c {
			return "", false
		}
		pos ^= unitOffset(u)
		if pos >= n {
			return "", false
		}
		if unitHasLeaf(u) {
			v := int(unitValue(p.units[pos]))
			if v >= len(p.blob) {
				return "", false
			}
			end := v
			for end < len(p.blob) && p.blob[end] != 0 {
				end++
			}
			return string(p.blob[v:end]), true
		}
	}
	return "", false
}

// normalize applies the map per grapheme cluster as Hugging Face does: a
// cluster shorter than 6 bytes is looked up whole first; otherwise, or if it
// has no entry, each of its characters is looked up alone. The first
// replacement switches from copying to building the change list.
func (p *precompiled) normalize(n *normStr, sc *scratch) {
	text := n.text
	items := sc.items[:0]
	modified := false
	// flush turns the unchanged prefix text[:upTo] into change items.
	flush := func(upTo int) {
		if modified {
			return
		}
		modified = true
		for i := 0; i < upTo; {
			r, size := utf8.DecodeRune(text[i:upTo])
			items = append(items, change{r, 0})
			i += size
		}
	}
	state := -1
	for pos := 0; pos < len(text); {
		c := text[pos]
		// An ASCII character followed by ASCII (other than CR LF) is a
		// grapheme cluster of its own.
		if c < utf8.RuneSelf && (pos+1 == len(text) || (text[pos+1] < utf8.RuneSelf && !(c == '\r' && text[pos+1] == '\n'))) {
			state = -1
			if rep := p.ascii[c]; rep != nil {
				flush(pos)
				items = appendReplace(items, 1, *rep)
			} else if modified {
				items = append(items, change{rune(c), 0})
			}
			pos++
			continue
		}
		var g []byte
		g, _, _, state = uniseg.FirstGraphemeCluster(text[pos:], state)
		if len(g) < 6 {
			if rep, ok := p.lookup(g); ok {
				flush(pos)
				items = appendReplace(items, utf8.RuneCount(g), rep)
				pos += len(g)
				continue
			}
		}
		for i := 0; i < len(g); {
			r, size := utf8.DecodeRune(g[i:])
			if rep, ok := p.lookup(g[i : i+size]); ok {
				flush(pos + i)
				items = appendReplace(items, 1, rep)
			} else if modified {
				items = append(items, change{r, 0})
			}
			i += size
		}
		pos += len(g)
	}
	sc.items = items
	if modified {
		n.transform(sc, items, 0)
	}
}
