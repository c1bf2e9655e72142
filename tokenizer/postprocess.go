package tokenizer

import "unicode/utf8"

// piece of a post-processor template: a special token or the sequence.
type templatePiece struct {
	special bool
	ids     []int32
	typeID  int32
}

// postProcessor adds special tokens around one sequence.
type postProcessor struct {
	// single is the template for one sequence.
	single []templatePiece
	// trimOffsets and addPrefixSpace are RobertaProcessing's offset trimming.
	trimOffsets, addPrefixSpace bool
	// added is the number of special tokens; seqType the type id of the
	// sequence, which applies even when special tokens are left out.
	added   int
	seqType int32
}

func (p *postProcessor) numAdded() int {
	if p == nil {
		return 0
	}
	return p.added
}

func (p *postProcessor) finish() {
	p.added = 0
	for _, t := range p.single {
		if t.special {
			p.added += len(t.ids)
		} else {
			p.seqType = t.typeID
		}
	}
}

// apply writes the template around content into e; with special false
// only the content is written, with the template's sequence type id.
func (p *postProcessor) apply(e *Encoding, ids []int32, offs []Offset, special bool) {
	n := len(ids) + p.numAdded()
	if !special {
		n = len(ids)
	}
	e.IDs = make([]int32, 0, n)
	e.TypeIDs = make([]int32, 0, n)
	e.AttentionMask = make([]uint8, 0, n)
	e.SpecialTokensMask = make([]uint8, 0, n)
	e.Offsets = make([]Offset, 0, n)
	if p == nil || !special {
		var typ int32
		if p != nil {
			typ = p.seqType
		}
		e.IDs = append(e.IDs, ids...)
		e.Offsets = append(e.Offsets, offs...)
		for range ids {
			e.TypeIDs = append(e.TypeIDs, typ)
			e.AttentionMask = append(e.AttentionMask, 1)
			e.SpecialTokensMask = append(e.SpecialTokensMask, 0)
		}
		return
	}
	for _, t := range p.single {
		if t.special {
			for _, id := range t.ids {
				e.IDs = append(e.IDs, id)
				e.TypeIDs = append(e.TypeIDs, t.typeID)
				e.AttentionMask = append(e.AttentionMask, 1)
				e.SpecialTokensMask = append(e.SpecialTokensMask, 1)
				e.Offsets = append(e.Offsets, Offset{})
			}
			continue
		}
		e.IDs = append(e.IDs, ids...)
		e.Offsets = append(e.Offsets, offs...)
		for range ids {
			e.TypeIDs = append(e.TypeIDs, t.typeID)
			e.AttentionMask = append(e.AttentionMask, 1)
			e.SpecialTokensMask = append(e.SpecialTokensMask, 0)
		}
	}
}

// spaceCounts returns how many characters at the start and at the end of a
// token's string are spaces in the sense of Hugging Face's process_offsets
// (whitespace or the byte-level 'Ġ').
func spaceCounts(tok string) (lead, trail int32) {
	rs := []rune(tok)
	for int(lead) < len(rs) && isTrimSpace(rs[lead]) {
		lead++
	}
	for int(trail) < len(rs) && isTrimSpace(rs[len(rs)-1-int(trail)]) {
		trail++
	}
	return lead, trail
}

func isTrimSpace(r rune) bool { return r == 'Ġ' || isWhitespace(r) }

// trimOffsets is RobertaProcessing's trim_offsets, applied after truncation
// as Hugging Face does: offsets move inwards by the number of space
// characters at either end of the token's string, counted as bytes. Where
// that lands inside a multi-byte character, the offset moves back to the
// start of that character, which is what Hugging Face reports in character
// offsets; spans stay on character boundaries.
func trimOffsets(text string, offs []Offset, lead, trail []int32, addPrefixSpace bool) {
	for i := range offs {
		l, t := int(lead[i]), int(trail[i])
		if l == 0 && t == 0 {
			continue
		}
		o := &offs[i]
		if l > 0 {
			if (i == 0 || o.Start == 0) && addPrefixSpace && l == 1 {
				l = 0
			}
			o.Start = min(o.Start+l, o.End)
		}
		if t > 0 && o.End >= t {
			o.End = max(o.End-t, o.Start)
		}
		o.Start, o.End = charStart(text, o.Start), charStart(text, o.End)
	}
}

// charStart moves i back to the start of the character that contains it,
// reading text as the tokenizer does (each invalid byte is a character).
func charStart(text string, i int) int {
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if utf8.RuneStart(text[j]) {
			r, size := utf8.DecodeRuneInString(text[j:])
			if (r != utf8.RuneError || size > 1) && j+size > i {
				return j
			}
			return i
		}
	}
	return i
}
