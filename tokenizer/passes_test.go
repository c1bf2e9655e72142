package tokenizer_test

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag/tokenizer"
)

// TestLongTextInPasses checks that a text of several passes (a document of
// megabytes, whose whole encoding held about 70 bytes per byte) encodes to
// the ids and offsets of its encoding in one pass, which the golden tests
// check against Hugging Face's tokenizers: the cuts fall before ASCII white
// space, after accents, CJK, punctuation, control characters, invalid
// UTF-8 and combining marks alike. A tokenizer whose pipeline a cut could
// change (Metaspace, a normaliser that is not per character) never cuts.
func TestLongTextInPasses(t *testing.T) {
	tok := loadTokenizer(t, "testdata/bert-uncased.tokenizer.json.gz")
	if !tokenizer.Cuts(tok) {
		t.Fatal("a BERT WordPiece tokenizer does not encode long texts in passes")
	}
	pieces := []string{"Café naïve résumé", "日本語のテキスト", "tabs\tand\nnewlines\r\n", " \u0301combining after a space",
		"hello,world!!", "control\x00\x07chars", "invalid \xff\xfe utf-8", "supercalifragilisticexpialidocious",
		"ÅNGSTRÖM", "   runs   of   spaces   ", "3.14159 2,718", "\u00a0no-break\u2003em-space", "emoji 🙂👍🏽"}
	rng := rand.New(rand.NewSource(1))
	var b strings.Builder
	for b.Len() < 3*tokenizer.PassBytes+12345 {
		b.WriteString(pieces[rng.Intn(len(pieces))])
		b.WriteString([]string{" ", "\n", "", "\t"}[rng.Intn(4)])
	}
	text := b.String()
	opts := tokenizer.Options{NoSpecial: true, MaxLength: -1}
	cut := tok.EncodeWith(text, opts)
	tokenizer.SetCuts(tok, false)
	whole := tok.EncodeWith(text, opts)
	tokenizer.SetCuts(tok, true)
	if len(whole.IDs) < 100000 || !slices.Equal(cut.IDs, whole.IDs) || !slices.Equal(cut.Offsets, whole.Offsets) {
		t.Fatalf("%d bytes: %d tokens in passes, %d in one (first difference at %d)", len(text), len(cut.IDs), len(whole.IDs), firstDiff(cut, whole))
	}
	// A text without white space for more than a pass is cut at the first
	// white space after it.
	long := strings.Repeat("x", tokenizer.PassBytes+10) + " tail " + strings.Repeat("y", 100)
	tokenizer.SetCuts(tok, false)
	a := tok.EncodeWith(long, opts)
	tokenizer.SetCuts(tok, true)
	if c := tok.EncodeWith(long, opts); !slices.Equal(a.IDs, c.IDs) || !slices.Equal(a.Offsets, c.Offsets) {
		t.Error("a pass without white space: the encodings differ")
	}

	if tokenizer.Cuts(loadTokenizer(t, "testdata/xlmr-ja.tokenizer.json.gz")) {
		t.Error("a Metaspace tokenizer encodes long texts in passes")
	}
}

func firstDiff(a, b tokenizer.Encoding) int {
	for i := range min(len(a.IDs), len(b.IDs)) {
		if a.IDs[i] != b.IDs[i] || a.Offsets[i] != b.Offsets[i] {
			return i
		}
	}
	return min(len(a.IDs), len(b.IDs))
}
