package tokenizer_test

import (
	"testing"
	"unicode/utf8"

	"github.com/msrag/msrag/tokenizer"
)

// FuzzEncode checks invariants on any input, invalid UTF-8 included: no
// panic, one offset per id, content spans in order, inside the text and on
// UTF-8 boundaries of the original bytes, and Count equal to the content
// length.
func FuzzEncode(f *testing.F) {
	toks := []*tokenizer.Tokenizer{
		loadTokenizer(f, "testdata/bert-uncased.tokenizer.json.gz"),
		loadTokenizer(f, "testdata/xlmr-ja.tokenizer.json.gz"),
	}
	for _, s := range []string{"", "Hello, world!", "e\u0301\u0301 東京 👩\u200d💻", "\xff\xfe[SEP]<mask>", "  \t\n", "ｈｅｌｌｏ ①②"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, tok := range toks {
			e := tok.EncodeWith(text, tokenizer.Options{NoSpecial: true, MaxLength: -1})
			if len(e.Offsets) != len(e.IDs) || len(e.TypeIDs) != len(e.IDs) || len(e.AttentionMask) != len(e.IDs) || len(e.SpecialTokensMask) != len(e.IDs) {
				t.Fatalf("%q: slice lengths differ", text)
			}
			if n := tok.Count(text); n != len(e.IDs) {
				t.Fatalf("%q: Count %d, Encode %d tokens", text, n, len(e.IDs))
			}
			prev := 0
			for i, o := range e.Offsets {
				if o.Start < prev || o.End < o.Start || o.End > len(text) {
					t.Fatalf("%q: token %d span %v out of order or outside [%d, %d]", text, i, o, prev, len(text))
				}
				if !boundary(text, o.Start) || !boundary(text, o.End) {
					t.Fatalf("%q: token %d span %v not on a character boundary", text, i, o)
				}
				prev = o.Start
			}
			s := tok.Encode(text)
			if len(s.IDs) > tok.MaxLength() && tok.MaxLength() > 0 {
				t.Fatalf("%q: %d tokens over max_length %d", text, len(s.IDs), tok.MaxLength())
			}
		}
	})
}

// boundary reports whether i starts a character of s as the tokenizer reads
// it: the start of a valid UTF-8 sequence or any byte of an invalid one.
func boundary(s string, i int) bool {
	if i == 0 || i == len(s) {
		return true
	}
	for j := i - 1; j >= 0 && j >= i-3; j-- {
		if utf8.RuneStart(s[j]) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				return true // an invalid byte stands alone
			}
			return j+size <= i
		}
	}
	return true
}
