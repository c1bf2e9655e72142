package remote_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/msrag/msrag/remote"
	"github.com/msrag/msrag/remote/remotetest"
)

// toyServer stands in for an OpenAI-compatible embedding server: the vector
// of a text is [its length, 1], and every text counts as two tokens.
func toyServer() *remotetest.Server {
	return remotetest.NewServer(remotetest.Config{Model: "toy-model", Dims: 2,
		Embed:  func(text, _ string) []float32 { return []float32{float32(len(text)), 1} },
		Tokens: func(string) int { return 2 }})
}

func Example() {
	srv := toyServer()
	defer srv.Close()

	c, err := remote.New(remote.Options{
		Endpoints: []string{srv.URL + "/v1"},
		APIKey:    os.Getenv("MSRAG_EXAMPLE_API_KEY"), // never in errors or logs
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	vecs, err := c.Embed(context.Background(), []string{"a", "bb", "ccc"})
	if err != nil {
		log.Fatal(err)
	}
	dims := c.Dims()
	for i := range 3 {
		fmt.Println(vecs[i*dims : (i+1)*dims])
	}
	fmt.Println(c.Info().Model)
	// Output:
	// [1 1]
	// [2 1]
	// [3 1]
	// toy-model
}

func ExampleCheckPromptTokens() {
	srv := toyServer()
	defer srv.Close()

	c, err := remote.New(remote.Options{Endpoints: []string{srv.URL}, BatchTexts: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	texts := []string{"one", "two", "three"}
	_, usage, err := c.EmbedWithUsage(context.Background(), texts)
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range usage {
		fmt.Printf("texts %d..%d: %d prompt tokens\n", u.First, u.Last, u.PromptTokens)
	}
	// The caller's own counts, as the server counts them.
	n, err := remote.CheckPromptTokens(usage, []int{2, 2, 2})
	fmt.Println(n, err)
	// A server that read fewer tokens than the texts have cut some input.
	_, err = remote.CheckPromptTokens(usage, []int{2, 2, 3})
	fmt.Println(errors.Is(err, remote.ErrTokenCount))
	// Output:
	// texts 0..1: 4 prompt tokens
	// texts 2..2: 2 prompt tokens
	// 2 <nil>
	// true
}
