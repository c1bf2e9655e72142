package lexical

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzAnalyzer checks the analyzers on any bytes: terms are valid UTF-8 of
// at most MaxTermBytes; "none" gives lower-case words of two or more word
// characters; "english" gives at most as many terms; a reused Tokenizer
// agrees with a fresh one.
func FuzzAnalyzer(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "İstanbul ΟΔΟΣ's", "a\xffb cd\xc3", "x_y __ ²³", "The cats ran"} {
		f.Add(s)
	}
	en, none := English.NewTokenizer(), None.NewTokenizer()
	f.Fuzz(func(t *testing.T, s string) {
		words := none.Append(nil, s)
		for _, w := range words {
			if !utf8.ValidString(w) || len(w) > MaxTermBytes || utf8.RuneCountInString(w) < 2 {
				t.Fatalf("word %q of %q", w, s)
			}
			for _, r := range w {
				if !unicode.Is(wordTable, r) || (r != 0x3C2 && lower(r) != r) {
					t.Fatalf("word %q of %q: character %U", w, s, r)
				}
			}
		}
		terms := en.Append(nil, s)
		if len(terms) > len(words) {
			t.Fatalf("%d terms from %d words", len(terms), len(words))
		}
		for _, w := range terms {
			if w == "" || !utf8.ValidString(w) || len(w) > MaxTermBytes {
				t.Fatalf("term %q of %q", w, s)
			}
		}
		if !slices.Equal(terms, English.Terms(s)) || !slices.Equal(words, None.Terms(s)) {
			t.Fatalf("a reused tokenizer disagrees on %q", s)
		}
	})
}

// FuzzRead checks that Read never panics: it returns an error wrapping
// ErrCorrupt, or an index (also with the checksum made right, so that the
// parser's own checks are reached) that searches and writes back to a file that
// reads as the same index.
func FuzzRead(f *testing.F) {
	for _, docs := range [][][]string{nil, {nil}, {{"a1", "b1", "a1"}, {"b1"}}, randomDocs(8, 20, 15)} {
		var buf bytes.Buffer
		build(f, docs).WriteTo(&buf)
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		readChecked(t, b)
		if len(b) >= 4 { // past the checksum, to reach the parser's checks
			readChecked(t, resum(slices.Clone(b)))
		}
	})
}

func readChecked(t *testing.T, b []byte) {
	ix, err := Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v does not wrap ErrCorrupt", err)
		}
		return
	}
	if _, err := ix.Search([][]string{{"a1"}, {"b1", "taa"}}, 3, DefaultBM25, nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read(&buf, int64(buf.Len()))
	if err != nil || back.termData != ix.termData || !bytes.Equal(back.post, ix.post) || !slices.Equal(back.docLen, ix.docLen) {
		t.Fatalf("rewritten index differs: %v", err)
	}
}
