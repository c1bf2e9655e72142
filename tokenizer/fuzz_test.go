package tokenizer_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/msrag/msrag/tokenizer"
)

// FuzzEncode checks invariants on any input, invalid UTF-8 included: no
// panic, one offset per id, content spans in order, inside the text and on
// UTF-8 boundaries of the original bytes, and Count equal to the content
// length.
func FuzzEncode(f *testing.F) {
	// The third one trims offsets (RobertaProcessing) around spaces kept in
	// the pieces, which must not leave spans inside a character.
	trim, err := tokenizer.FromJSON(applyPatch(f, readGzip(f, "testdata/xlmr-ja.tokenizer.json.gz"), map[string]json.RawMessage{
		"vocab_extra":    json.RawMessage(`[[" ", -4.0], ["a ", -2.0], ["\u3000", -1.0], ["\u00a0x\u00a0", -1.0]]`),
		"normalizer":     json.RawMessage(`null`),
		"pre_tokenizer":  json.RawMessage(`{"type": "Split", "pattern": {"String": "x"}, "behavior": "MergedWithNext", "invert": false}`),
		"post_processor": json.RawMessage(`{"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": true, "add_prefix_space": true}`),
	}))
	if err != nil {
		f.Fatal(err)
	}
	toks := []*tokenizer.Tokenizer{
		loadTokenizer(f, "testdata/bert-uncased.tokenizer.json.gz"),
		loadTokenizer(f, "testdata/xlmr-ja.tokenizer.json.gz"),
		trim,
	}
	for _, s := range []string{"", "Hello, world!", "\u00a0x\u00a0 \u3000a x\u3000", "e\u0301\u0301 東京 👩\u200d💻", "\xff\xfe[SEP]<mask>", "  \t\n", "ｈｅｌｌｏ ①②"} {
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
