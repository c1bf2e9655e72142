package remote

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/tokenizer"
)

// testTokenizer returns the path of the committed BERT uncased tokenizer and
// the tokenizer itself.
func testTokenizer(tb testing.TB) (string, *tokenizer.Tokenizer) {
	tb.Helper()
	path := testfiles.BERTUncased(tb, tb.TempDir())
	tok, err := tokenizer.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return path, tok
}

// exactCount returns a count function that counts as msrag does: prefix
// (added by the server when it is not in the text) plus text plus [CLS] and
// [SEP].
func exactCount(tok *tokenizer.Tokenizer, serverPrefix string) func(string) int {
	return func(t string) int { return tok.Count(serverPrefix+t) + 2 }
}

// newTestEmbedder starts a fake OpenAI-compatible server counting tokens as
// msrag does and opens an Embedder on it with e5's prefixes.
func newTestEmbedder(t *testing.T, mod func(*fake, *EmbedderOptions)) (*Embedder, *fake) {
	t.Helper()
	path, tok := testTokenizer(t)
	f := newFake(t, OpenAI, 8)
	f.Config.Tokens = exactCount(tok, "")
	o := EmbedderOptions{Client: fastOptions(OpenAI, f.URL+"/v1"), Tokenizer: path,
		QueryPrefix: "query: ", PassagePrefix: "passage: "}
	if mod != nil {
		mod(f, &o)
	}
	e, err := NewEmbedder(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, f
}

// unit returns v scaled to unit length.
func unit(v []float32) []float32 {
	out := append([]float32(nil), v...)
	embed.Normalize(out)
	return out
}

func closeTo(a, b []float32) bool {
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return len(a) == len(b)
}

func TestEmbedderSpec(t *testing.T) {
	e, f := newTestEmbedder(t, nil)
	s := e.Spec()
	if m, h := e.ServerMaxTokens(); m != DefaultMaxTokens || h != DefaultHeadroom {
		t.Errorf("server maximum %d, headroom %d", m, h)
	}
	if s.Name != "openai:fake-model" || s.Dims != 8 || s.MaxTokens != DefaultMaxTokens-DefaultHeadroom || s.SpecialTokens != 2 ||
		s.PrefixTokens != [2]int{2, 2} || s.Checksums["tokenizer.json"] == "" || s.Checksums["model.onnx"] != "" {
		t.Errorf("spec %+v", s)
	}
	if got := len(f.Received()); got != 1 {
		t.Errorf("%d requests to open, want the one probe", got)
	}
	sv := e.Served()
	if sv.API != OpenAI || sv.Model != "fake-model" || len(sv.Endpoints) != 1 || !strings.HasSuffix(sv.Endpoints[0], "/v1") {
		t.Errorf("served %+v", sv)
	}
}

func TestEmbedderPrefixes(t *testing.T) {
	for _, inputType := range []bool{false, true} {
		t.Run(map[bool]string{false: "prefix", true: "input_type"}[inputType], func(t *testing.T) {
			e, f := newTestEmbedder(t, func(f *fake, o *EmbedderOptions) {
				o.InputType = inputType
				if inputType {
					_, tok := testTokenizer(t)
					f.Config.Tokens = func(s string) int { return tok.Count("passage: "+s) + 2 }
				}
			})
			chunks := []embed.Chunk{{Text: "the first chunk"}, {Text: "a second one"}}
			out, err := e.EmbedChunks(context.Background(), chunks, embed.Passage)
			if err != nil {
				t.Fatal(err)
			}
			last := f.Received()[len(f.Received())-1]
			var it string
			json.Unmarshal(last.Body["input_type"], &it)
			for i, c := range chunks {
				want := "passage: " + c.Text
				if inputType {
					want = c.Text
				}
				if last.Inputs[i] != want {
					t.Errorf("sent %q, want %q", last.Inputs[i], want)
				}
				if !closeTo(out[i*8:(i+1)*8], unit(vecFor(want, 8))) {
					t.Errorf("row %d is not the server's vector of %q, normalised", i, want)
				}
			}
			if (it == "passage") != inputType {
				t.Errorf("input_type %q with InputType %v", it, inputType)
			}
			if ck := e.TokenChecks(); ck.Requests != 1 || ck.Equal != 1 || ck.Resent != 0 {
				t.Errorf("token checks %+v", ck)
			}
		})
	}
}

// TestEmbedderTruncation covers what the Embedder does with the counts a
// server reports: equal, otherwise but under the maximum, at the maximum
// (cut), none.
func TestEmbedderTruncation(t *testing.T) {
	_, tok := testTokenizer(t)
	const maxTokens = 32
	long := strings.Repeat("word ", 26) // 26 + 2 prefix + 2 special = 30 tokens
	tests := []struct {
		name    string
		count   func(string) int
		noUsage bool
		wantErr error
		resent  int64
		differ  int64
	}{
		{"equal", exactCount(tok, ""), false, nil, 0, 0},
		{"fewer under the maximum", func(s string) int { return tok.Count(s) + 1 }, false, nil, 3, 3},
		{"cut at the maximum", func(s string) int { return min(tok.Count(s)+2+5, maxTokens) }, false, ErrTokenCount, 0, 0},
		{"no usage", nil, true, ErrTokenCount, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, f := newTestEmbedder(t, func(f *fake, o *EmbedderOptions) {
				o.MaxTokens = maxTokens
				f.Config.NoUsage = tt.noUsage
				if tt.count != nil {
					f.Config.Tokens = tt.count
				}
			})
			chunks := []embed.Chunk{{Text: "short"}, {Text: long}, {Text: "another short one"}}
			_, err := e.EmbedChunks(context.Background(), chunks, embed.Passage)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if ck := e.TokenChecks(); ck.Resent != tt.resent || ck.Differ != tt.differ {
				t.Errorf("token checks %+v, want %d resent, %d differing", ck, tt.resent, tt.differ)
			}
			if tt.noUsage { // queries are cut by msrag itself: no count needed
				if _, err := e.Embed(context.Background(), []string{"q"}, embed.Query); err != nil {
					t.Errorf("query without usage: %v", err)
				}
			}
			_ = f
		})
	}
}

func TestEmbedderTooLong(t *testing.T) {
	e, f := newTestEmbedder(t, func(_ *fake, o *EmbedderOptions) { o.MaxTokens = 16 })
	before := len(f.Received())
	_, err := e.EmbedChunks(context.Background(), []embed.Chunk{{Text: "ok"}, {Text: strings.Repeat("x ", 13)}}, embed.Passage)
	if !errors.Is(err, ErrTooLong) || !strings.Contains(err.Error(), "has 17 tokens") || !strings.Contains(err.Error(), "text 1 (") {
		t.Errorf("error %v, want ErrTooLong for text 1", err)
	}
	if len(f.Received()) != before {
		t.Error("a request went out for a call with a chunk that cannot fit")
	}
	out, err := e.Embed(context.Background(), []string{strings.Repeat("x ", 40)}, embed.Query)
	if err != nil || len(out) != 8 {
		t.Fatalf("long query: %v", err)
	}
	sent := f.Received()[len(f.Received())-1].Inputs[0]
	_, tok := testTokenizer(t)
	if n := tok.Count(sent) + 2; n != 16-DefaultHeadroom {
		t.Errorf("long query sent as %q: %d tokens, want it cut to 16 less the headroom", sent, n)
	}
}

func TestEmbedderOptions(t *testing.T) {
	path, _ := testTokenizer(t)
	tei := newFake(t, TEI, 4)
	ctx := context.Background()
	e, err := NewEmbedder(ctx, EmbedderOptions{Client: fastOptions(TEI, tei.URL), Tokenizer: path})
	if err != nil {
		t.Fatal(err)
	}
	if s := e.Spec(); s.Name != "tei:fake-model" || s.MaxTokens != 512-DefaultHeadroom || s.Dims != 4 {
		t.Errorf("tei spec %+v, want max tokens from /info", s)
	}
	raw, err := NewEmbedder(ctx, EmbedderOptions{Client: fastOptions(TEI, tei.URL), Tokenizer: path, NoNormalize: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := raw.EmbedChunks(ctx, []embed.Chunk{{Text: "kept as sent"}}, embed.Passage)
	if last := tei.Received()[len(tei.Received())-1]; err != nil || string(last.Body["normalize"]) != "false" ||
		!closeTo(out, vecFor("kept as sent", 4)) {
		t.Errorf("no-normalize: %v, request %s, row %v", err, last.Body["normalize"], out)
	}
	for _, tt := range []struct {
		name string
		o    EmbedderOptions
		want error
	}{
		{"no tokenizer", EmbedderOptions{Client: fastOptions(TEI, tei.URL)}, ErrOptions},
		{"tei input type", EmbedderOptions{Client: fastOptions(TEI, tei.URL), Tokenizer: path, InputType: true}, ErrOptions},
		{"over tei's maximum", EmbedderOptions{Client: fastOptions(TEI, tei.URL), Tokenizer: path, MaxTokens: 1024}, ErrOptions},
		{"dims", EmbedderOptions{Client: fastOptions(TEI, tei.URL), Tokenizer: path, Dims: 5}, ErrMismatch},
	} {
		if _, err := NewEmbedder(ctx, tt.o); !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestParseModelSpec(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want ModelSpec
		ok   bool
	}{
		{"openai:http://127.0.0.1:8000/v1#multilingual-e5-small-q4", ModelSpec{OpenAI, "http://127.0.0.1:8000/v1", "multilingual-e5-small-q4"}, true},
		{"tei:https://tei.example:8080", ModelSpec{TEI, "https://tei.example:8080", ""}, true},
		{"e5-small-v2", ModelSpec{}, false},
		{"openai:models/e5", ModelSpec{}, false},
		{"tei:http://", ModelSpec{}, false},
	} {
		got, err := ParseModelSpec(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseModelSpec(%q) = %+v, %v", tt.in, got, err)
		}
		if IsModelSpec(tt.in) != (tt.ok || tt.in == "tei:http://") {
			t.Errorf("IsModelSpec(%q) = %v", tt.in, IsModelSpec(tt.in))
		}
	}
	if got := JoinEndpoints("a", []string{"b", "a", " c "}); strings.Join(got, ",") != "a,b,c" {
		t.Errorf("JoinEndpoints: %v", got)
	}
}
