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
	return p, nil
}

func unitOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }
func unitLabel(u uint32) uint32  { return u & ((1 << 31) | 0xff) }
func unitHasLeaf(u uint32) bool  { return (u>>8)&1 == 1 }
func unitValue(u uint32) uint32  { return u & ((1 << 31) - 1) }

// lookup returns the replacement of the shortest key that is a prefix of s,
// which is what the Hugging Face normalizer uses.
func (p *precompiled) lookup(s string) (string, bool) {
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
// has no entry, each of its characters is looked up alone.
func (p *precompiled) normalize(n *normStr) {
	text := string(n.text)
	var items []change
	modified := false
	state := -1
	rest := text
	for len(rest) > 0 {
		var g string
		g, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		if len(g) < 6 {
			if rep, ok := p.lookup(g); ok {
				if !modified {
					items = make([]change, 0, len(text))
					for _, r := range text[:len(text)-len(rest)-len(g)] {
						items = append(items, change{r, 0})
					}
					modified = true
				}
				items = appendReplace(items, utf8.RuneCountInString(g), rep)
				continue
			}
		}
		for i, r := range g {
			part := g[i : i+utf8.RuneLen(r)]
			if r == utf8.RuneError {
				part = g[i:]
				_, sz := utf8.DecodeRuneInString(part)
				part = part[:sz]
			}
			if rep, ok := p.lookup(part); ok {
				if !modified {
					items = make([]change, 0, len(text))
					for _, r := range text[:len(text)-len(rest)-len(g)+i] {
						items = append(items, change{r, 0})
					}
					modified = true
				}
				items = appendReplace(items, 1, rep)
			} else if modified {
				items = append(items, change{r, 0})
			}
		}
	}
	if modified {
		n.transform(items, 0)
	}
}
