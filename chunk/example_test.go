package chunk_test

import (
	"fmt"

	"github.com/msrag/msrag/chunk"
)

func Example() {
	text := "one two three four five"
	// Byte spans of the content tokens, as the tokenizer reports them.
	offs := []chunk.Span{{0, 3}, {4, 7}, {8, 13}, {14, 18}, {19, 23}}

	c, err := chunk.New(chunk.Config{Windows: chunk.Sizes(2, 8), MaxTokens: 16, PrefixTokens: 2, SpecialTokens: 2})
	if err != nil {
		panic(err)
	}
	var r chunk.Result // reuse it for the next document
	if err := c.Split(text, offs, &r); err != nil {
		panic(err)
	}
	for i, ch := range r.Chunks {
		fmt.Printf("chunk %d tokens %v bytes %v %q\n", i, ch.Tokens, ch.Bytes, r.Text(text, i))
	}
	fmt.Println("w=2:", r.Windows[0], "w=8:", r.Windows[1])

	_, err = chunk.New(chunk.Config{Windows: chunk.Sizes(600), MaxTokens: 512, PrefixTokens: 2, SpecialTokens: 2})
	fmt.Println(err)
	// Output:
	// chunk 0 tokens {0 2} bytes {0 7} "one two"
	// chunk 1 tokens {2 4} bytes {8 18} "three four"
	// chunk 2 tokens {3 5} bytes {14 23} "four five"
	// chunk 3 tokens {0 5} bytes {0 23} "one two three four five"
	// w=2: [0 1 2] w=8: [3]
	// chunk: window 600 + 2 prefix tokens + 2 special tokens = 604 exceeds the model's maximum of 512 tokens (508 of content; windows that fit: 508): window exceeds the model's maximum length
}
