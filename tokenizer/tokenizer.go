package tokenizer

import (
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// Offset is a byte span [Start, End) in the original text.
type Offset struct{ Start, End int }

// Encoding is the result of encoding one text. All slices have one entry
// per token.
type Encoding struct {
	IDs               []int32
	TypeIDs           []int32
	AttentionMask     []uint8
	SpecialTokensMask []uint8
	Offsets           []Offset // special tokens get {0,0}
}

// Options control one encoding. The zero value encodes as tokenizer.json
// says (special tokens added, truncation as configured).
type Options struct {
	// NoSpecial leaves out the post-processor's special tokens.
	NoSpecial bool
	// MaxLength: 0 truncates as tokenizer.json says; >0 truncates to this
	// many tokens, special tokens included; <0 never truncates.
	MaxLength int
}

// Tokenizer encodes text as a Hugging Face tokenizer.json describes. It is
// immutable after loading and safe for concurrent use.
type Tokenizer struct {
	normalizer   normalizer
	preTokenizer preTokenizer
	model        model
	post         *postProcessor
	added        *addedVocab

	trim      bool // RobertaProcessing trim_offsets
	cuts      bool // a long text may be encoded in passes cut at white space (cutsAtSpace)
	maxLength int  // truncation max_length, 0 if none
	truncLeft bool // truncation direction Left
	padID     int32
}

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := FromJSON(data)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = path
		}
		return nil, err
	}
	return t, nil
}

// FromJSON builds a tokenizer from the contents of a tokenizer.json file.
func FromJSON(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, &Error{Err: &detail{err.Error(), ErrInvalid}}
	}
	t := &Tokenizer{}
	var err error
	if !isNull(f.Normalizer) {
		if t.normalizer, err = buildNormalizer("normalizer", f.Normalizer); err != nil {
			return nil, err
		}
	}
	if !isNull(f.PreTokenizer) {
		if t.preTokenizer, err = buildPreTokenizer("pre_tokenizer", f.PreTokenizer); err != nil {
			return nil, err
		}
	}
	if isNull(f.Model) {
		return nil, invalid("model", "missing")
	}
	if t.model, err = buildModel("model", f.Model); err != nil {
		return nil, err
	}
	if !isNull(f.PostProcessor) {
		if t.post, err = buildPostProcessor("post_processor", f.PostProcessor); err != nil {
			return nil, err
		}
	}
	if tr := f.Truncation; tr != nil {
		switch tr.Direction {
		case "", "Right":
		case "Left":
			t.truncLeft = true
		default:
			return nil, unsupported("truncation.direction", "direction %q", tr.Direction)
		}
		if tr.MaxLength < 0 {
			return nil, invalid("truncation.max_length", "negative max_length %d", tr.MaxLength)
		}
		t.maxLength = tr.MaxLength
	}
	if f.Padding != nil {
		t.padID = f.Padding.PadID
	}
	if t.added, err = newAddedVocab(f.AddedTokens, t.normalizer, t.model); err != nil {
		return nil, err
	}
	t.trim = t.post != nil && t.post.trimOffsets
	t.cuts = t.cutsAtSpace()
	return t, nil
}

// MaxLength is the truncation max_length of the file, 0 if none.
func (t *Tokenizer) MaxLength() int { return t.maxLength }

// PadID is the padding id of the file, 0 if none.
func (t *Tokenizer) PadID() int32 { return t.padID }

// NumSpecialTokens is how many tokens the post-processor adds to one
// sequence.
func (t *Tokenizer) NumSpecialTokens() int { return t.post.numAdded() }

// VocabSize is the number of token ids the tokenizer knows: the model's
// vocabulary and the added tokens; every valid id is in [0, VocabSize).
func (t *Tokenizer) VocabSize() int {
	n := t.model.vocabSize()
	for id := range t.added.content {
		n = max(n, int(id)+1)
	}
	return n
}

// TokenToID looks a token up in the added tokens, then the model vocabulary.
func (t *Tokenizer) TokenToID(tok string) (int32, bool) {
	if id, ok := t.added.byContent[tok]; ok {
		return id, true
	}
	return t.model.tokenToID(tok)
}

// Encode encodes text with the defaults of tokenizer.json (never padded).
func (t *Tokenizer) Encode(text string) Encoding { return t.EncodeWith(text, Options{}) }

// EncodeWith encodes text with the given options.
func (t *Tokenizer) EncodeWith(text string, o Options) Encoding {
	st := getState()
	defer putState(st)
	t.content(text, st, nil)
	ids, offs := st.ids, st.offs
	max := o.MaxLength
	if max == 0 {
		max = t.maxLength
	}
	added := t.post.numAdded()
	if o.NoSpecial {
		added = 0
	}
	if max > 0 {
		keep := max - added
		if keep < 0 {
			keep = 0
		}
		if len(ids) > keep {
			if t.truncLeft {
				ids, offs = ids[len(ids)-keep:], offs[len(offs)-keep:]
			} else {
				ids, offs = ids[:keep], offs[:keep]
			}
		}
	}
	if t.trim {
		lead, trail := st.lead, st.trail
		if len(ids) < len(st.ids) {
			if t.truncLeft {
				lead, trail = lead[len(lead)-len(ids):], trail[len(trail)-len(ids):]
			} else {
				lead, trail = lead[:len(ids)], trail[:len(ids)]
			}
		}
		trimOffsets(text, offs, lead, trail, t.post.addPrefixSpace)
	}
	var e Encoding
	t.post.apply(&e, ids, offs, !o.NoSpecial)
	return e
}

// AddSpecial applies the post-processor (one sequence) to content ids that
// were encoded without special tokens, such as a window of a longer text.
// The content offsets are left zero.
func (t *Tokenizer) AddSpecial(ids []int32) Encoding {
	var e Encoding
	t.post.apply(&e, ids, make([]Offset, len(ids)), true)
	return e
}

// Count is the number of content tokens of text: no special tokens and no
// truncation.
func (t *Tokenizer) Count(text string) int {
	st := getState()
	defer putState(st)
	n := 0
	flush := func() {
		n += len(st.ids)
		st.ids, st.offs, st.lead, st.trail = st.ids[:0], st.offs[:0], st.lead[:0], st.trail[:0]
	}
	t.content(text, st, flush)
	flush()
	return n
}

// AppendContent appends the content tokens of text (no special tokens, no
// truncation) to ids and their offsets to offs, of any struct type with
// the fields Start and End (such as chunk.Span), and returns both: the
// content of EncodeWith(text, Options{NoSpecial: true, MaxLength: -1})
// without its copies. A long text is encoded in passes where that gives
// the same tokens (BERT's WordPiece: passes of about 1 MiB cut before
// white space), so that memory beyond ids and offs stays bounded.
func AppendContent[O ~struct{ Start, End int }](t *Tokenizer, text string, ids []int32, offs []O) ([]int32, []O) {
	st := getState()
	defer putState(st)
	flush := func() {
		if t.trim {
			trimOffsets(text, st.offs, st.lead, st.trail, t.post.addPrefixSpace)
		}
		ids = append(ids, st.ids...)
		offs = slices.Grow(offs, len(st.offs))
		for _, o := range st.offs {
			offs = append(offs, O(o))
		}
		st.ids, st.offs, st.lead, st.trail = st.ids[:0], st.offs[:0], st.lead[:0], st.trail[:0]
	}
	t.content(text, st, flush)
	flush()
	return ids, offs
}

// EncodeBatch encodes texts on all cores; results are in input order.
func (t *Tokenizer) EncodeBatch(texts []string, o Options) []Encoding {
	out := make([]Encoding, len(texts))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(texts) {
		workers = len(texts)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(texts) {
					return
				}
				out[i] = t.EncodeWith(texts[i], o)
			}
		}()
	}
	wg.Wait()
	return out
}

// state is per-call scratch space, pooled.
type state struct {
	ids    []int32
	offs   []Offset
	pieces []normStr
	toks   []token
	segs   []segment
	sc     scratch
	// lead and trail count the space characters at the ends of each
	// token's string, kept only when trim_offsets is on.
	lead, trail []int32
}

var statePool = sync.Pool{New: func() any { return new(state) }}

func getState() *state { return statePool.Get().(*state) }

func putState(st *state) {
	if cap(st.ids) > 1<<20 || cap(st.sc.bufs[0].text) > 1<<24 || cap(st.sc.bufs[1].text) > 1<<24 {
		return // do not keep huge buffers alive
	}
	statePool.Put(st)
}

// content runs added-token splitting, normalisation, pre-tokenisation and
// the model, leaving the content ids and original offsets in st. When the
// tokenizer cuts long texts into passes (Tokenizer.cuts), flush, when not
// nil, is called after each pass to take what st holds.
func (t *Tokenizer) content(text string, st *state, flush func()) {
	st.ids, st.offs = st.ids[:0], st.offs[:0]
	st.lead, st.trail = st.lead[:0], st.trail[:0]
	st.segs = t.added.splitRaw(st.segs[:0], text)
	for _, sg := range st.segs {
		if sg.id >= 0 {
			st.ids = append(st.ids, sg.id)
			st.offs = append(st.offs, Offset{sg.s, sg.e})
			t.trimAdded(st, sg.id)
			continue
		}
		for from := sg.s; from < sg.e; {
			to := sg.e
			if t.cuts {
				to = cutAt(text, from, sg.e)
			}
			t.contentPass(text, from, to, st)
			from = to
			if flush != nil && t.cuts {
				flush()
			}
		}
	}
}

// contentPass encodes text[from:to], a piece without added tokens of the
// raw text, into st.
func (t *Tokenizer) contentPass(text string, from, to int, st *state) {
	n := newNormStr(&st.sc, text, from, to)
	if t.normalizer != nil {
		t.normalizer.normalize(&n, &st.sc)
	}
	t.added.splitNormalized(n, func(piece normStr, id int32, s, e int) {
		if id >= 0 {
			sp := piece.orig(s, e)
			st.ids = append(st.ids, id)
			st.offs = append(st.offs, Offset{int(sp.start), int(sp.end)})
			t.trimAdded(st, id)
			return
		}
		t.modelPiece(piece, st)
	})
}

// passBytes is the most bytes of a long text one pass of the normaliser and
// the pre-tokenizer holds when the tokenizer may cut it (Tokenizer.cuts):
// their buffers take about 70 bytes per byte of text, so a document of
// 100 MB encoded whole took 7 GB.
const passBytes = 1 << 20

// cutAt returns where the pass over text[from:end] that begins at from
// ends: end when that is at most passBytes away, else at the last ASCII
// white space byte in the pass's second half (the space begins the next
// pass), or failing that the first one after it.
func cutAt(text string, from, end int) int {
	if end-from <= passBytes {
		return end
	}
	lim := from + passBytes
	for i := lim; i > from+passBytes/2; i-- {
		if isASCIISpace(text[i]) {
			return i
		}
	}
	for i := lim; i < end; i++ {
		if isASCIISpace(text[i]) {
			return i
		}
	}
	return end
}

func isASCIISpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// cutsAtSpace reports whether cutting a text before an ASCII white space
// character and encoding the pieces one after the other gives the tokens
// and offsets of the whole: the normaliser works character by character
// (or is a Unicode normal form, which a space, a starter, bounds), the
// pre-tokenizer splits at white space and drops it, and no added token is
// matched in normalised text (where one could span the cut). This holds
// for BERT's WordPiece tokenizers, every built-in model's.
func (t *Tokenizer) cutsAtSpace() bool {
	switch t.normalizer.(type) {
	case nil, *bertNormalizer, lowercaseNormalizer, stripAccentsNormalizer, decomposeNormalizer, composeNormalizer:
	default:
		return false
	}
	switch t.preTokenizer.(type) {
	case bertPreTokenizer, whitespacePreTokenizer, whitespaceSplit:
	default:
		return false
	}
	return !t.trim && !t.added.norm.any
}

func (t *Tokenizer) modelPiece(n normStr, st *state) {
	st.pieces = st.pieces[:0]
	st.sc.arena.text, st.sc.arena.align = st.sc.arena.text[:0], st.sc.arena.align[:0]
	if t.preTokenizer != nil {
		st.pieces = t.preTokenizer.split(st.pieces, n, &st.sc)
	} else if len(n.text) > 0 {
		st.pieces = append(st.pieces, n)
	}
	for _, p := range st.pieces {
		st.toks = t.model.tokenize(st.toks[:0], p.text, &st.sc)
		for _, tk := range st.toks {
			sp := p.orig(int(tk.s), int(tk.e))
			st.ids = append(st.ids, tk.id)
			st.offs = append(st.offs, Offset{int(sp.start), int(sp.end)})
			if t.trim {
				l, r := spaceCounts(t.model.value(tk, p.text))
				st.lead, st.trail = append(st.lead, l), append(st.trail, r)
			}
		}
	}
}

// trimAdded records the space counts of an added token's content.
func (t *Tokenizer) trimAdded(st *state, id int32) {
	if !t.trim {
		return
	}
	l, r := spaceCounts(t.added.content[id])
	st.lead, st.trail = append(st.lead, l), append(st.trail, r)
}

// validUTF8Boundary reports whether i is a rune start in s (or its end).
func validUTF8Boundary(s string, i int) bool {
	return i == len(s) || i == 0 || utf8.RuneStart(s[i])
}
