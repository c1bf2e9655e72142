package tokenizer

// scratch holds the reusable buffers of one encoding call, so that the
// steady state of a loop over texts allocates only the returned Encoding.
type scratch struct {
	bufs  [2]normStr // normalisers write into these in turn
	which int
	arena normStr // rewritten pre-tokenizer pieces (Metaspace)
	items []change
	ms    []match
	lat   lattice
	toks  []token
	seqs  [][]normStr // free list of piece slices for Sequence
}

// next returns an empty buffer that is not the one returned last time.
func (s *scratch) next() normStr {
	s.which ^= 1
	b := s.bufs[s.which]
	return normStr{text: b.text[:0], align: b.align[:0]}
}

// keep records a buffer returned by next after appending to it, so that its
// grown capacity is reused.
func (s *scratch) keep(n normStr) { s.bufs[s.which] = n }

// arenaAppend starts a new piece in the arena; the caller appends to the
// returned value and calls arenaDone.
func (s *scratch) arenaStart() int { return len(s.arena.text) }

// arenaPiece returns the arena bytes written since start as a piece. Pieces
// stay valid when the arena grows later: they keep the old backing array.
func (s *scratch) arenaPiece(start int) normStr {
	return s.arena.sub(start, len(s.arena.text))
}

func (s *scratch) getSeq() []normStr {
	if n := len(s.seqs); n > 0 {
		p := s.seqs[n-1]
		s.seqs = s.seqs[:n-1]
		return p[:0]
	}
	return nil
}

func (s *scratch) putSeq(p []normStr) { s.seqs = append(s.seqs, p) }
