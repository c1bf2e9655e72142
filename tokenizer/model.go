package tokenizer

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"unicode/utf8"
)

// token is one model output: an id and its byte range in the piece.
type token struct {
	id   int32
	s, e int32
}

// model turns one pre-tokenized piece into tokens, appended to dst.
type model interface {
	tokenize(dst []token, text []byte, sc *scratch) []token
	tokenToID(tok string) (int32, bool)
	vocabSize() int
	// value is the string Hugging Face keeps for the token: the vocabulary
	// piece, or for Unigram the matched text; text is the piece's text.
	value(tk token, text []byte) string
}

// wordPiece is the WordPiece model: greedy longest match first.
type wordPiece struct {
	vocab    map[string]int32
	cont     map[string]int32 // pieces that start with the prefix, prefix cut off
	unk      int32
	unkTok   string
	prefix   string
	maxChars int
	maxLen   int // longest piece in bytes, prefix excluded
}

func newWordPiece(vocab map[string]int32, unk string, prefix string, maxChars int) (*wordPiece, error) {
	w := &wordPiece{vocab: vocab, cont: make(map[string]int32), maxChars: maxChars, unkTok: unk, prefix: prefix}
	id, ok := vocab[unk]
	if !ok {
		return nil, fmt.Errorf("unk_token %q is not in the vocabulary", unk)
	}
	w.unk = id
	for k, v := range vocab {
		if len(k) > w.maxLen {
			w.maxLen = len(k)
		}
		if prefix != "" && len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			w.cont[k[len(prefix):]] = v
		}
	}
	return w, nil
}

func (w *wordPiece) vocabSize() int { return len(w.vocab) }

func (w *wordPiece) value(tk token, text []byte) string {
	if tk.id == w.unk && tk.s == 0 && int(tk.e) == len(text) {
		return w.unkTok
	}
	if tk.s > 0 {
		return w.prefix + string(text[tk.s:tk.e])
	}
	return string(text[tk.s:tk.e])
}

func (w *wordPiece) tokenToID(tok string) (int32, bool) {
	id, ok := w.vocab[tok]
	return id, ok
}

func (w *wordPiece) tokenize(dst []token, text []byte, _ *scratch) []token {
	n := len(text)
	if n == 0 {
		return dst
	}
	if n > w.maxChars && utf8.RuneCount(text) > w.maxChars {
		return append(dst, token{w.unk, 0, int32(n)})
	}
	mark := len(dst)
	for start := 0; start < n; {
		m := w.vocab
		if start > 0 {
			m = w.cont
		}
		end := n
		if end-start > w.maxLen {
			end = start + w.maxLen
		}
		found := false
		for ; end > start; end-- {
			if end < n && !utf8.RuneStart(text[end]) {
				continue
			}
			if id, ok := m[string(text[start:end])]; ok {
				dst = append(dst, token{id, int32(start), int32(end)})
				found = true
				break
			}
		}
		if !found {
			return append(dst[:mark], token{w.unk, 0, int32(n)})
		}
		start = end
	}
	return dst
}

// unigram is the Unigram model: Viterbi over the piece scores.
type unigram struct {
	ids          map[string]int32
	scores       []float64
	trie         *pieceTrie
	unk          int32 // -1 if none
	minScore     float64
	byteFallback bool
	fuseUnk      bool
	byteIDs      [256]int32 // <0xXX> pieces, -1 if absent
}

const unkPenalty = 10.0

func newUnigram(pieces []string, scores []float64, unk int, byteFallback bool) (*unigram, error) {
	u := &unigram{ids: make(map[string]int32, len(pieces)), scores: scores, trie: newPieceTrie(), unk: -1,
		minScore: math.Inf(1), byteFallback: byteFallback, fuseUnk: true}
	for i, p := range pieces {
		u.ids[p] = int32(i) // a repeated piece maps to its last id, as in Hugging Face
		if scores[i] < u.minScore {
			u.minScore = scores[i]
		}
		u.trie.insert(p, int32(i))
	}
	u.trie.compile()
	if unk >= 0 {
		if unk >= len(pieces) {
			return nil, fmt.Errorf("unk_id %d is outside the vocabulary of %d pieces", unk, len(pieces))
		}
		u.unk = int32(unk)
	}
	for b := 0; b < 256; b++ {
		u.byteIDs[b] = -1
		if id, ok := u.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
			u.byteIDs[b] = id
		}
	}
	return u, nil
}

func (u *unigram) vocabSize() int { return len(u.scores) }

func (u *unigram) value(tk token, text []byte) string {
	piece := text[tk.s:tk.e]
	if u.byteFallback && tk.id != u.unk {
		if id, ok := u.ids[string(piece)]; !ok || id != tk.id {
			return "" // a <0xXX> byte piece
		}
	}
	return string(piece)
}

func (u *unigram) tokenToID(tok string) (int32, bool) {
	id, ok := u.ids[tok]
	return id, ok
}

type lattice struct {
	score []float64
	from  []int32
	id    []int32
}

func (u *unigram) tokenize(dst []token, text []byte, sc *scratch) []token {
	if len(text) == 0 {
		return dst
	}
	u.viterbi(text, &sc.lat)
	mark := len(dst)
	dst = u.backtrack(dst, &sc.lat, len(text))
	// A fused piece whose string is in the vocabulary takes that id; else
	// byte fallback (all bytes must have pieces) or the unknown id.
	sc.toks = append(sc.toks[:0], dst[mark:]...)
	out := dst[:mark]
	for _, t := range sc.toks {
		out = u.resolve(out, t, text)
	}
	return out
}

// viterbi fills lat with the best segmentation of text: for every end
// position, the best score, the start of its last piece and that piece's id
// (the unknown id where no piece covers a character).
func (u *unigram) viterbi(text []byte, lat *lattice) {
	n := len(text)
	if cap(lat.score) < n+1 {
		lat.score = make([]float64, n+1)
		lat.from = make([]int32, n+1)
		lat.id = make([]int32, n+1)
	}
	lat.score, lat.from, lat.id = lat.score[:n+1], lat.from[:n+1], lat.id[:n+1]
	for i := range lat.from {
		lat.from[i], lat.score[i], lat.id[i] = -1, 0, 0
	}
	relax := func(s, e int, score float64, id int32) {
		if lat.from[e] < 0 || score > lat.score[e] {
			lat.score[e], lat.from[e], lat.id[e] = score, int32(s), id
		}
	}
	unkScore := u.minScore - unkPenalty
	for s := 0; s < n; {
		base := lat.score[s]
		mblen := 1
		if text[s] >= utf8.RuneSelf {
			_, mblen = utf8.DecodeRune(text[s:])
		}
		single := false
		u.trie.prefixes(text[s:], func(length int, id int32) {
			relax(s, s+length, base+u.scores[id], id)
			single = single || length == mblen
		})
		if !single {
			relax(s, s+mblen, base+unkScore, u.unk)
		}
		s += mblen
	}
}

// backtrack appends the pieces of the best path to dst in text order;
// consecutive unknowns fuse into one piece.
func (u *unigram) backtrack(dst []token, lat *lattice, n int) []token {
	mark := len(dst)
	for e := n; e > 0; {
		s := int(lat.from[e])
		id := lat.id[e]
		if u.fuseUnk && u.unk >= 0 && id == u.unk {
			for s > 0 && lat.id[s] == u.unk && lat.from[s] >= 0 {
				s = int(lat.from[s])
			}
		}
		dst = append(dst, token{id, int32(s), int32(e)})
		e = s
	}
	for i, j := mark, len(dst)-1; i < j; i, j = i+1, j-1 {
		dst[i], dst[j] = dst[j], dst[i]
	}
	return dst
}

// resolve appends t to out, giving an unknown piece its vocabulary id, its
// bytes' pieces (byte fallback), or the unknown id.
func (u *unigram) resolve(out []token, t token, text []byte) []token {
	if t.id != u.unk && t.id >= 0 {
		return append(out, t)
	}
	piece := text[t.s:t.e]
	if id, ok := u.ids[string(piece)]; ok {
		t.id = id
		return append(out, t)
	}
	if u.byteFallback && !slices.ContainsFunc(piece, func(b byte) bool { return u.byteIDs[b] < 0 }) {
		for _, b := range piece {
			out = append(out, token{u.byteIDs[b], t.s, t.e})
		}
		return out
	}
	t.id = u.unk
	return append(out, t)
}

// pieceTrie is a byte trie over the vocabulary pieces, built with maps and
// then compiled into flat arrays: a table for the root's children and, per
// node, a sorted run of child labels searched in place.
type pieceTrie struct {
	nodes []trieNode // while building

	root    [256]int32
	first   []int32 // per node: start of its children in labels/targets
	count   []int32 // per node: number of children
	labels  []byte
	targets []int32
	ids     []int32 // per node: piece id ending here, or -1
}

type trieNode struct {
	next map[byte]int32
	id   int32 // -1 if no piece ends here
}

func newPieceTrie() *pieceTrie {
	return &pieceTrie{nodes: []trieNode{{id: -1}}}
}

func (t *pieceTrie) insert(s string, id int32) {
	cur := int32(0)
	for i := 0; i < len(s); i++ {
		nd := &t.nodes[cur]
		if nd.next == nil {
			nd.next = make(map[byte]int32, 2)
		}
		nx, ok := nd.next[s[i]]
		if !ok {
			nx = int32(len(t.nodes))
			nd.next[s[i]] = nx
			t.nodes = append(t.nodes, trieNode{id: -1})
		}
		cur = nx
	}
	t.nodes[cur].id = id
}

// compile turns the built trie into its flat form and drops the maps.
func (t *pieceTrie) compile() {
	n := len(t.nodes)
	t.first = make([]int32, n)
	t.count = make([]int32, n)
	t.ids = make([]int32, n)
	for i := range t.root {
		t.root[i] = -1
	}
	for i, nd := range t.nodes {
		t.ids[i] = nd.id
		t.first[i] = int32(len(t.labels))
		t.count[i] = int32(len(nd.next))
		keys := make([]int, 0, len(nd.next))
		for b := range nd.next {
			keys = append(keys, int(b))
		}
		sort.Ints(keys)
		for _, b := range keys {
			t.labels = append(t.labels, byte(b))
			t.targets = append(t.targets, nd.next[byte(b)])
			if i == 0 {
				t.root[b] = nd.next[byte(b)]
			}
		}
	}
	t.nodes = nil
}

// prefixes calls f for every piece that is a prefix of b, shortest first.
func (t *pieceTrie) prefixes(b []byte, f func(length int, id int32)) {
	if len(b) == 0 {
		return
	}
	cur := t.root[b[0]]
	for i := 1; ; i++ {
		if cur < 0 {
			return
		}
		if id := t.ids[cur]; id >= 0 {
			f(i, id)
		}
		if i == len(b) {
			return
		}
		c := b[i]
		lo, hi := t.first[cur], t.first[cur]+t.count[cur]
		next := int32(-1)
		for hi-lo > 8 {
			mid := (lo + hi) / 2
			if t.labels[mid] < c {
				lo = mid + 1
			} else {
				hi = mid + 1 // mid may be the match
			}
		}
		for ; lo < hi; lo++ {
			if t.labels[lo] == c {
				next = t.targets[lo]
				break
			}
			if t.labels[lo] > c {
				break
			}
		}
		cur = next
	}
}
