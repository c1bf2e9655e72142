package tokenizer

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
