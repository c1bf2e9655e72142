package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/msrag/msrag/remote"
)

// toyServer stands in for an OpenAI-compatible embedding server: the vector
// of a text is [its length, 1], and every text counts as two tokens.
func toyServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		var data []map[string]any
		for i, t := range req.Input {
			data = append(data, map[string]any{"index": i, "embedding": []float32{float32(len(t)), 1}})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": "toy-model",
			"usage": map[string]int{"prompt_tokens": 2 * len(req.Input)}})
	}))
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
