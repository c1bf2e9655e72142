package tokenizer_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/msrag/msrag/tokenizer"
)

func exampleTokenizer() *tokenizer.Tokenizer {
	f, err := os.Open("testdata/bert-uncased.tokenizer.json.gz")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		panic(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		panic(err)
	}
	tok, err := tokenizer.FromJSON(data)
	if err != nil {
		panic(err)
	}
	return tok
}

// Offsets are byte spans of the original text, even where normalisation
// lower-cased and stripped accents.
func ExampleTokenizer_Encode() {
	tok := exampleTokenizer()
	text := "Héllo, Wörld!"
	e := tok.Encode(text)
	for i, id := range e.IDs {
		o := e.Offsets[i]
		fmt.Printf("%d %q\n", id, text[o.Start:o.End])
	}
	// Output:
	// 101 ""
	// 7592 "Héllo"
	// 1010 ","
	// 2088 "Wörld"
	// 999 "!"
	// 102 ""
}

// A chunker encodes a whole document once without special tokens or
// truncation, cuts windows of content ids, and adds the special tokens to
// each window.
func ExampleTokenizer_AddSpecial() {
	tok := exampleTokenizer()
	doc := tok.EncodeWith("one two three four five", tokenizer.Options{NoSpecial: true, MaxLength: -1})
	fmt.Println(tok.Count("one two three four five"), tok.NumSpecialTokens())
	w := tok.AddSpecial(doc.IDs[1:3])
	fmt.Println(w.IDs, w.SpecialTokensMask)
	// Output:
	// 5 2
	// [101 2048 2093 102] [1 0 0 1]
}
