package remote

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func nanValue() float64 { return math.NaN() }

func TestPlanBatches(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lens     []int
		maxTexts int
		maxBytes int
		want     []span
	}{
		{"empty", nil, 4, 10, nil},
		{"one batch", []int{1, 2, 3}, 4, 10, []span{{0, 3, 6}}},
		{"texts", []int{1, 1, 1, 1, 1}, 2, 100, []span{{0, 2, 2}, {2, 4, 2}, {4, 5, 1}}},
		{"bytes", []int{4, 4, 4}, 10, 8, []span{{0, 2, 8}, {2, 3, 4}}},
		{"oversized alone", []int{2, 20, 2}, 10, 8, []span{{0, 1, 2}, {1, 2, 20}, {2, 3, 2}}},
		{"oversized first", []int{20, 2}, 10, 8, []span{{0, 1, 20}, {1, 2, 2}}},
		{"empty texts", []int{0, 0, 0}, 2, 1, []span{{0, 2, 0}, {2, 3, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := make([]string, len(tc.lens))
			for i, n := range tc.lens {
				in[i] = strings.Repeat("x", n)
			}
			got := planBatches(in, tc.maxTexts, tc.maxBytes)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    map[string]string
		want time.Duration
	}{
		{"none", nil, -1},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fraction", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"milliseconds first", map[string]string{"Retry-After-Ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond},
		{"bad milliseconds", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "2"}, 2 * time.Second},
		{"negative", map[string]string{"Retry-After": "-3"}, -1},
		{"garbage", map[string]string{"Retry-After": "tomorrow"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.h {
				h.Set(k, v)
			}
			if got := retryAfter(h, now); got != tc.want {
				t.Fatalf("retryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	c := &Client{opts: Options{BackoffBase: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond}}
	for n := 1; n <= 8; n++ {
		ceil := min(10*time.Millisecond<<(n-1), 100*time.Millisecond)
		for range 200 {
			if d := c.backoff(n, -1); d < 0 || d >= ceil {
				t.Fatalf("retry %d waited %v, want in [0, %v)", n, d, ceil)
			}
		}
	}
	if d := c.backoff(1, 40*time.Millisecond); d != 40*time.Millisecond {
		t.Errorf("Retry-After 40ms gave %v", d)
	}
	if d := c.backoff(1, time.Hour); d != 100*time.Millisecond {
		t.Errorf("Retry-After 1h gave %v, want the cap", d)
	}
	if d := c.backoff(1, 0); d != 0 {
		t.Errorf("Retry-After 0 gave %v", d)
	}
	if !retryableStatus(429) || !retryableStatus(503) || !retryableStatus(408) || retryableStatus(400) || retryableStatus(413) {
		t.Errorf("retryable statuses wrong")
	}
}

func TestServerMessage(t *testing.T) {
	const key = "sk-abcdefghijklmnop"
	for _, tc := range []struct {
		name, body, want string
	}{
		{"openai", `{"error":{"message":"Invalid input","type":"invalid_request_error","param":null,"code":null}}`, "Invalid input"},
		{"tei", `{"error":"Model is overloaded","error_type":"overloaded"}`, "Model is overloaded"},
		{"tei v1 route", `{"message":"batch size 40 > maximum allowed batch size 32","code":413,"type":"validation"}`, "batch size 40 > maximum allowed batch size 32"},
		{"vllm old", `{"object":"error","message":"bad","type":"BadRequestError","param":null,"code":400}`, "bad"},
		{"fastapi", `{"detail":"Not authenticated"}`, "Not authenticated"},
		{"fastapi list", `{"detail":[{"loc":["body","input"],"msg":"field required"}]}`, `[{"loc":["body","input"],"msg":"field required"}]`},
		{"plain text", "upstream connect error\n  or disconnect", "upstream connect error or disconnect"},
		{"echoed key", `{"error":{"message":"key ` + key + ` is revoked"}}`, "key [api key removed] is revoked"},
		{"empty", ``, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverMessage([]byte(tc.body), key); got != tc.want {
				t.Fatalf("serverMessage = %q, want %q", got, tc.want)
			}
		})
	}
	long := serverMessage([]byte(strings.Repeat("é", 400)), "")
	if len(long) > 503 || !strings.HasSuffix(long, "...") || !strings.HasPrefix(long, "éé") {
		t.Errorf("long message kept as %d bytes: %q", len(long), long[:20])
	}
}

func TestScannerVector(t *testing.T) {
	var scratch []byte
	for _, tc := range []struct {
		raw  string
		want []float32
		err  string
	}{
		{`[1, -2.5e-1 ,3e2]`, []float32{1, -0.25, 300}, ""},
		{` [ ] `, nil, ""},
		{`[NaN, Infinity, -Infinity]`, []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}, ""},
		{`"` + b64Floats([]float32{1.5, -2}) + `"`, []float32{1.5, -2}, ""},
		{`"` + strings.ReplaceAll(b64Floats([]float32{0.1, 7, 9, 11}), "/", `\/`) + `"`, []float32{0.1, 7, 9, 11}, ""},
		{`"AAAAAAA="`, nil, "whole number of float32"},
		{`{"a":1}`, nil, "neither"},
		{`null`, nil, "no embedding"},
		{`[true]`, nil, "not a number"},
		{`[[1]]`, nil, "not a number"},
		{`[1 2]`, nil, "want ',' or ']'"},
		{`[1,`, nil, "unexpected end"},
	} {
		sc := scanner{b: []byte(tc.raw)}
		got, err := sc.vector(nil, &scratch)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%s: got %v, %v; want %v", tc.raw, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(tc.want[i]))) {
				t.Errorf("%s: got %v, want %v", tc.raw, got, tc.want)
			}
		}
	}
}

func TestScannerSkip(t *testing.T) {
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{`{"a":[1,{"b":"x\"y"},null,true],"c":{}}`, true},
		{` [ ] `, true},
		{`"\u00e9"`, true},
		{`{"a":1,}`, false},
		{`{"a" 1}`, false},
		{`[1,2`, false},
		{`"abc`, false},
		{"\"a\x01b\"", false},
		{`{"a":1} x`, false},
	} {
		sc := scanner{b: []byte(tc.doc)}
		err := sc.skip()
		if err == nil {
			err = sc.end()
		}
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want ok %v", tc.doc, err, tc.ok)
		}
	}
}

func TestCheckPromptTokens(t *testing.T) {
	want := []int{3, 4, 5, 6}
	ok := []Usage{{First: 0, Last: 1, PromptTokens: 7}, {First: 2, Last: 3, PromptTokens: 11}}
	if n, err := CheckPromptTokens(ok, want); err != nil || n != 2 {
		t.Errorf("matching counts: %d, %v", n, err)
	}
	unknown := []Usage{{First: 0, Last: 1, PromptTokens: -1}, {First: 2, Last: 3, PromptTokens: 11}}
	if n, err := CheckPromptTokens(unknown, want); err != nil || n != 1 {
		t.Errorf("one unreported: %d, %v", n, err)
	}
	cut := []Usage{{First: 0, Last: 1, PromptTokens: 7}, {First: 2, Last: 3, PromptTokens: 9, Endpoint: "http://h/v1/embeddings"}}
	_, err := CheckPromptTokens(cut, want)
	if !errors.Is(err, ErrTokenCount) || !strings.Contains(err.Error(), "texts 2..3") || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("fewer tokens: %v", err)
	}
	more := []Usage{{First: 0, Last: 1, PromptTokens: 9}}
	if _, err := CheckPromptTokens(more, want); !errors.Is(err, ErrTokenCount) || !strings.Contains(err.Error(), "counts otherwise") {
		t.Errorf("more tokens: %v", err)
	}
	if _, err := CheckPromptTokens([]Usage{{First: 3, Last: 4, PromptTokens: 1}}, want); !errors.Is(err, ErrTokenCount) {
		t.Errorf("out of range: %v", err)
	}
}
