package remote

import (
	"github.com/msrag/msrag/remote/remotetest"

	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/msrag/msrag/embed"
)

// benchTexts is the number of texts embedded per benchmark op: allocs/op and
// B/op are per 10,000 texts.
const benchTexts = 10000

// benchServer answers every embedding request at once with fixed vectors
// from responses prepared for each batch size, so that a benchmark measures
// the client (and the loopback transport), not the server. It counts inputs
// as the `","` separators of its input array plus one, which holds for
// benchTextsOf's texts.
func benchServer(tb testing.TB, kind API, dims, maxBatch int) *httptest.Server {
	tb.Helper()
	return benchServerTokens(tb, kind, dims, maxBatch, 0)
}

// benchServerTokens is benchServer whose OpenAI-compatible responses count
// per prompt tokens for each text (0: fakeTokens of benchTextsOf's texts).
func benchServerTokens(tb testing.TB, kind API, dims, maxBatch, per int) *httptest.Server {
	tb.Helper()
	f := &fake{remotetest.NewServer(remotetest.Config{Model: "bench-model", Dims: dims})}
	defer f.Close()
	if per > 0 {
		f.Config.Tokens = func(string) int { return per }
	}
	floatResp, b64Resp := make([][]byte, maxBatch+1), make([][]byte, maxBatch+1)
	for n := 1; n <= maxBatch; n++ {
		in := benchTextsOf(n)
		if kind == TEI {
			rows := make([][]float32, n)
			for i, t := range in {
				rows[i] = vecFor(t, dims)
			}
			floatResp[n], _ = json.Marshal(rows)
			continue
		}
		floatResp[n], _ = json.Marshal(f.openaiBody(in, false, nil))
		b64Resp[n], _ = json.Marshal(f.openaiBody(in, true, nil))
	}
	pool := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	sep, b64 := []byte(`","`), []byte(`"encoding_format":"base64"`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := pool.Get().(*bytes.Buffer)
		defer pool.Put(buf)
		buf.Reset()
		buf.ReadFrom(r.Body)
		n := bytes.Count(buf.Bytes(), sep) + 1
		resp := floatResp[n]
		if bytes.Contains(buf.Bytes(), b64) {
			resp = b64Resp[n]
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(resp)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// benchTextsOf returns n texts of about 60 bytes, without `","`.
func benchTextsOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("passage %d: the quick brown fox jumps over the lazy dog %d", i, i*31)
	}
	return out
}

func BenchmarkEmbed(b *testing.B) {
	const dims, batch = 384, 32
	in := benchTextsOf(benchTexts)
	inBytes := 0
	for _, t := range in {
		inBytes += len(t)
	}
	for _, tc := range []struct {
		name string
		kind API
		enc  Encoding
	}{
		{"openai-float", OpenAI, Float},
		{"openai-base64", OpenAI, Base64},
		{"tei-float", TEI, Float},
	} {
		b.Run(fmt.Sprintf("%s/dims=%d", tc.name, dims), func(b *testing.B) {
			srv := benchServer(b, tc.kind, dims, batch)
			o := Options{API: tc.kind, Endpoints: []string{srv.URL}, Encoding: tc.enc, BatchTexts: batch, Concurrency: 4}
			c := mustNew(b, o)
			if _, err := c.Embed(context.Background(), in[:batch]); err != nil { // connections, /info
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(inBytes))
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := c.Embed(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchTexts), "ns/text")
		})
	}
	b.Run(fmt.Sprintf("baseline-http/dims=%d", dims), func(b *testing.B) {
		benchBaseline(b, in, dims, batch, inBytes)
	})
}

// benchBaseline sends the same requests with net/http alone, 4 at a time,
// reading and discarding the float responses: the transport and fake server
// cost that BenchmarkEmbed's numbers include.
func benchBaseline(b *testing.B, in []string, dims, batch, inBytes int) {
	srv := benchServer(b, OpenAI, dims, batch)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	hc := &http.Client{Transport: tr}
	defer hc.CloseIdleConnections()
	var bodies [][]byte
	for lo := 0; lo < len(in); lo += batch {
		body, _ := json.Marshal(openaiRequest{Input: in[lo:min(lo+batch, len(in))], EncodingFormat: "float"})
		bodies = append(bodies, body)
	}
	b.ReportAllocs()
	b.SetBytes(int64(inBytes))
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		var wg sync.WaitGroup
		next := make(chan []byte)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for body := range next {
					res, err := hc.Post(srv.URL+"/embeddings", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}()
		}
		for _, body := range bodies {
			next <- body
		}
		close(next)
		wg.Wait()
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*len(in)), "ns/text")
}

// BenchmarkEmbedderChunks measures the Embedder over the client: counting
// every text's tokens with the tokenizer, the client's requests to a server
// that answers at once, the count check and the normalisation, per 10,000
// chunk texts of 16 tokens with e5's passage prefix. The fake server's
// usage.prompt_tokens equals msrag's count, as a server with the same
// tokenizer reports it.
func BenchmarkEmbedderChunks(b *testing.B) {
	const dims, batch = 384, 32
	path, tok := testTokenizer(b)
	letters := "abcdefghijklmnopqrstuvwxyz"
	chunks := make([]embed.Chunk, benchTexts)
	inBytes := 0
	for i := range chunks {
		chunks[i].Text = fmt.Sprintf("the quick brown fox jumps over the lazy dog near %c %c %c river bank today",
			letters[i%26], letters[(i/26)%26], letters[(i/676)%26])
		inBytes += len(chunks[i].Text)
	}
	per := tok.Count("passage: "+chunks[0].Text) + 2
	srv := benchServerTokens(b, OpenAI, dims, batch, per)
	for _, conc := range []int{1, 4} {
		b.Run(fmt.Sprintf("concurrency=%d/dims=%d", conc, dims), func(b *testing.B) {
			e, err := NewEmbedder(context.Background(), EmbedderOptions{
				Client:    Options{Endpoints: []string{srv.URL}, Encoding: Base64, BatchTexts: batch, Concurrency: conc},
				Tokenizer: path, QueryPrefix: "query: ", PassagePrefix: "passage: "})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			b.ReportAllocs()
			b.SetBytes(int64(inBytes))
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				if _, err := e.EmbedChunks(context.Background(), chunks, embed.Passage); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchTexts), "ns/text")
			if ck := e.TokenChecks(); ck.Resent != 0 {
				b.Fatalf("token counts differed: %+v", ck)
			}
		})
	}
}
