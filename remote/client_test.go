package remote

import (
	"github.com/msrag/msrag/remote/remotetest"

	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestEmbedOpenAI(t *testing.T) {
	for _, tc := range []struct {
		name string
		enc  Encoding
	}{{"float", Float}, {"base64", Base64}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, OpenAI, 16)
			o := fastOptions(OpenAI, f.URL+"/v1/")
			o.Encoding, o.BatchTexts, o.Model, o.InputType = tc.enc, 7, "e5", "passage"
			o.APIKey = "sk-test-0123456789"
			c := mustNew(t, o)
			in := texts(100)
			out, usage, err := c.EmbedWithUsage(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, out, in, 16)
			reqs := f.Received()
			if len(reqs) != 15 || len(usage) != 15 {
				t.Fatalf("%d requests, %d usages, want 15 (100 texts by 7)", len(reqs), len(usage))
			}
			r := reqs[0]
			if r.Path != "/v1/embeddings" || r.Auth != "Bearer sk-test-0123456789" {
				t.Errorf("path %q auth %q", r.Path, r.Auth)
			}
			for field, want := range map[string]string{"model": `"e5"`, "encoding_format": `"` + tc.enc.String() + `"`, "input_type": `"passage"`} {
				if got := string(r.Body[field]); got != want {
					t.Errorf("request %s = %s, want %s", field, got, want)
				}
			}
			if _, ok := r.Body["dimensions"]; ok {
				t.Errorf("dimensions sent though not set")
			}
			wantTokens := make([]int, len(in))
			for i, s := range in {
				wantTokens[i] = fakeTokens(s)
			}
			if n, err := CheckPromptTokens(usage, wantTokens); err != nil || n != 15 {
				t.Errorf("CheckPromptTokens = %d, %v; want 15, nil", n, err)
			}
			info, st := c.Info(), c.Stats()
			if info.Model != "fake-model" || info.Dims != 16 || c.Dims() != 16 {
				t.Errorf("info %+v", info)
			}
			if st.Requests != 15 || st.Retries != 0 || st.Texts != 100 || st.TokenReports != 15 || st.Busy <= 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestEmbedAs(t *testing.T) {
	f := newFake(t, OpenAI, 4)
	o := fastOptions(OpenAI, f.URL)
	o.InputType = "passage"
	c := mustNew(t, o)
	if _, _, err := c.EmbedAs(context.Background(), "query", texts(2)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.EmbedAs(context.Background(), "", texts(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(context.Background(), texts(2)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range f.Received() {
		got = append(got, string(r.Body["input_type"]))
	}
	if want := []string{`"query"`, ``, `"passage"`}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("input_type sent %q, want %q", got, want)
	}
	tei := mustNew(t, fastOptions(TEI, f.URL))
	if _, _, err := tei.EmbedAs(context.Background(), "query", texts(1)); !errors.Is(err, ErrOptions) {
		t.Errorf("tei EmbedAs: %v, want ErrOptions", err)
	}
}

func TestEmbedTEI(t *testing.T) {
	f := newFake(t, TEI, 8)
	f.Config.Model, f.Config.MaxClientBatchSize = "intfloat/e5-small", 6
	var log bytes.Buffer
	o := fastOptions(TEI, f.URL)
	o.Log, o.NoNormalize = &log, true
	c := mustNew(t, o)
	in := texts(20)
	out, usage, err := c.EmbedWithUsage(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, out, in, 8)
	if _, err := c.Embed(context.Background(), in[:3]); err != nil {
		t.Fatal(err)
	}
	if f.InfoRequests() != 1 {
		t.Errorf("GET /info %d times, want once", f.InfoRequests())
	}
	reqs := f.Received()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 4 of at most 6 texts and 1", len(reqs))
	}
	for _, r := range reqs {
		if r.Path != "/embed" || len(r.Inputs) > 6 {
			t.Errorf("request to %s with %d inputs", r.Path, len(r.Inputs))
		}
		if string(r.Body["truncate"]) != "false" || string(r.Body["normalize"]) != "false" {
			t.Errorf("truncate %s normalize %s, want false false", r.Body["truncate"], r.Body["normalize"])
		}
	}
	if usage[0].PromptTokens != -1 {
		t.Errorf("tei reported prompt tokens %d", usage[0].PromptTokens)
	}
	info := c.Info()
	if info.Model != "intfloat/e5-small" || info.MaxInputLength != 512 || info.MaxClientBatch != 6 || info.BatchTexts != 6 {
		t.Errorf("info %+v", info)
	}
	if !strings.Contains(log.String(), "at most 6 texts per request") {
		t.Errorf("log does not tell of the capped batch: %q", log.String())
	}
}

func TestTEIModelMismatch(t *testing.T) {
	a, b := newFake(t, TEI, 4), newFake(t, TEI, 4)
	b.Config.Model = "other/model"
	c := mustNew(t, fastOptions(TEI, a.URL, b.URL))
	_, err := c.Embed(context.Background(), texts(3))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "other/model") {
		t.Fatalf("error %v, want ErrMismatch naming the other model", err)
	}
	o := fastOptions(TEI, a.URL)
	o.Model = "wanted/model"
	c = mustNew(t, o)
	if _, err := c.Embed(context.Background(), texts(3)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("error %v, want ErrMismatch for Options.Model", err)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		header  string
		value   func() string
		minWait time.Duration
	}{
		{"seconds", "Retry-After", func() string { return "1" }, 900 * time.Millisecond},
		{"http date", "Retry-After", func() string { return time.Now().Add(2 * time.Second).UTC().Format(http.TimeFormat) }, 900 * time.Millisecond},
		{"milliseconds", "Retry-After-Ms", func() string { return "300" }, 280 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, OpenAI, 4)
			f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
				if n > 1 {
					return false
				}
				w.Header().Set(tc.header, tc.value())
				writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "rate limited", "type": "rate_limit"}})
				return true
			}
			o := fastOptions(OpenAI, f.URL)
			o.BackoffMax = 5 * time.Second
			c := mustNew(t, o)
			in := texts(3)
			out, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, out, in, 4)
			reqs := f.Received()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			if gap := reqs[1].At.Sub(reqs[0].At); gap < tc.minWait {
				t.Errorf("retried after %v, want at least %v", gap, tc.minWait)
			}
			if st := c.Stats(); st.Retries != 1 || st.Endpoints[0].Errors != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestRetryThenSuccess(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool
	}{
		{"500", func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				writeJSON(w, 500, map[string]any{"error": map[string]any{"message": "boom"}})
			}
			return n == 1
		}},
		{"timeout", func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				select { // hold the first request past the client's timeout
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			}
			return n == 1
		}},
		{"short body", func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				w.Header().Set("Content-Length", "5000")
				w.WriteHeader(200)
				w.Write([]byte(`{"data":[`))
			}
			return n == 1
		}},
		{"connection cut", func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
			if n == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			}
			return n == 1
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, OpenAI, 4)
			f.Config.Handle = tc.handle
			var log bytes.Buffer
			o := fastOptions(OpenAI, f.URL)
			o.Timeout, o.Log = 200*time.Millisecond, &log
			c := mustNew(t, o)
			in := texts(5)
			out, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, out, in, 4)
			if st := c.Stats(); st.Requests != 2 || st.Retries != 1 || st.Failed != 0 {
				t.Errorf("stats %+v", st)
			}
			if !strings.Contains(log.String(), "retry 1 of 5") {
				t.Errorf("log %q does not tell of the retry", log.String())
			}
		})
	}
}

func TestFailsEveryRetry(t *testing.T) {
	const key = "sk-live-SECRET-4242424242"
	f := newFake(t, OpenAI, 4)
	f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
		for _, in := range s.Inputs {
			if in == texts(40)[37] {
				msg := "engine overloaded for key " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
				writeJSON(w, 503, map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
				return true
			}
		}
		return false
	}
	var log bytes.Buffer
	o := fastOptions(OpenAI, f.URL+"/v1")
	o.APIKey, o.MaxRetries, o.BatchTexts, o.Log, o.Concurrency = key, 2, 5, &log, 1
	c := mustNew(t, o)
	_, err := c.Embed(context.Background(), texts(40))
	var re *RequestError
	if !errors.As(err, &re) || !errors.Is(err, ErrStatus) {
		t.Fatalf("error %v, want a *RequestError wrapping ErrStatus", err)
	}
	if re.First != 35 || re.Last != 39 || re.Status != 503 || re.Attempts != 3 {
		t.Errorf("error fields %+v", re)
	}
	msg := err.Error()
	for _, want := range []string{"remote: texts 35..39", f.URL + "/v1/embeddings", "status 503", "engine overloaded", "after 3 attempts"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, key) || strings.Contains(log.String(), key) {
		t.Errorf("the api key leaked: error %q, log %q", msg, log.String())
	}
	if strings.Count(log.String(), "\n") != 2 {
		t.Errorf("log has %d lines, want one per retry:\n%s", strings.Count(log.String(), "\n"), log.String())
	}
	if st := c.Stats(); st.Failed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   API
		status int
		body   any
		want   error
		text   string
	}{
		{"openai 400", OpenAI, 400, map[string]any{"error": map[string]any{"message": "input must not be empty", "type": "invalid_request_error"}},
			ErrStatus, "input must not be empty"},
		{"openai 401", OpenAI, 401, map[string]any{"error": map[string]any{"message": "incorrect api key provided"}}, ErrStatus, "incorrect api key"},
		{"vllm too long", OpenAI, 400, map[string]any{"object": "error", "message": "This model's maximum context length is 512 tokens. However, you requested 600 tokens in the input for embedding generation. Please reduce the length of the input.", "type": "BadRequestError", "code": 400},
			ErrTooLong, "maximum context length is 512"},
		{"tei too long", TEI, 413, map[string]any{"error": "`inputs` must have less than 512 tokens. Given: 700", "error_type": "validation"},
			ErrTooLong, "max_input_length is 512"},
		{"tei batch size", TEI, 413, map[string]any{"error": "batch size 64 > maximum allowed batch size 32", "error_type": "validation"},
			ErrStatus, "maximum allowed batch size"},
		{"tei tokenizer", TEI, 422, map[string]any{"error": "tokenization error", "error_type": "tokenizer"}, ErrStatus, "tokenization error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.kind, 4)
			f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
				writeJSON(w, tc.status, tc.body)
				return true
			}
			c := mustNew(t, fastOptions(tc.kind, f.URL))
			_, err := c.Embed(context.Background(), texts(3))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v, want %v with %q", err, tc.want, tc.text)
			}
			if tc.want == ErrStatus && errors.Is(err, ErrTooLong) {
				t.Errorf("%v is ErrTooLong", err)
			}
			if n := len(f.Received()); n != 1 {
				t.Errorf("%d requests, want 1 (no retry)", n)
			}
		})
	}
}

func TestBadResponses(t *testing.T) {
	nan := b64Floats([]float32{1, float32(nanValue()), 3, 4})
	for _, tc := range []struct {
		name string
		body string
		dims int // Options.Dimensions
		want error
		text string
	}{
		{"truncated json", `{"data":[{"index":0,"embedding":[0.1,0.2`, 0, ErrResponse, "decoding the response"},
		{"no data", `{"model":"m"}`, 0, ErrResponse, `no "data"`},
		{"wrong count", `{"data":[{"index":0,"embedding":[1,2,3,4]}]}`, 0, ErrResponse, "1 vectors for 2 texts"},
		{"wrong dims", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":1,"embedding":[1,2,3]}]}`, 0, ErrMismatch, "text 1: vector of 3 dims, want 4"},
		{"options dims", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":1,"embedding":[1,2,3,4]}]}`, 5, ErrMismatch, "want 5 as Options.Dimensions"},
		{"index out of range", `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":2,"embedding":[1,2,3,4]}]}`, 0, ErrResponse, "index 2, outside 0..1"},
		{"duplicate index", `{"data":[{"index":1,"embedding":[1,2,3,4]},{"index":1,"embedding":[1,2,3,4]}]}`, 0, ErrResponse, "index 1 appears twice"},
		{"nan in base64", `{"data":[{"index":0,"embedding":"` + nan + `"},{"index":1,"embedding":"` + nan + `"}]}`, 0, ErrResponse, "value 1 is NaN"},
		{"nan literal", `{"data":[{"index":0,"embedding":[NaN,1]},{"index":1,"embedding":[1,1]}]}`, 0, ErrResponse, "text 0: value 0 is NaN"},
		{"no embedding", `{"data":[{"index":0},{"index":1,"embedding":[1,1]}]}`, 0, ErrResponse, "text 0: no embedding"},
		{"trailing data", `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1]}]} {}`, 0, ErrResponse, "data after the end"},
		{"too many", `{"data":[{"embedding":[1]},{"embedding":[1]},{"embedding":[1]}]}`, 0, ErrResponse, "item 2 has index 2, outside 0..1"},
		{"overflow", `{"data":[{"index":0,"embedding":[1e39,1]},{"index":1,"embedding":[1,1]}]}`, 0, ErrResponse, "does not fit a float32"},
		{"string value", `{"data":[{"index":0,"embedding":["1",1]},{"index":1,"embedding":[1,1]}]}`, 0, ErrResponse, "not a number"},
		{"null embedding", `{"data":[{"index":0,"embedding":null},{"index":1,"embedding":[1,1]}]}`, 0, ErrResponse, "no embedding"},
		{"empty vector", `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`, 0, ErrResponse, "empty vector"},
		{"bad base64", `{"data":[{"index":0,"embedding":"@@@"},{"index":1,"embedding":"AAAA"}]}`, 0, ErrResponse, "bad base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, OpenAI, 4)
			f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
				w.Write([]byte(tc.body))
				return true
			}
			o := fastOptions(OpenAI, f.URL)
			o.Dimensions = tc.dims
			c := mustNew(t, o)
			_, err := c.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), "texts 0..1") {
				t.Fatalf("error %v, want %v naming texts 0..1 and %q", err, tc.want, tc.text)
			}
			if n := len(f.Received()); n != 1 {
				t.Errorf("%d requests, want 1: a bad response is not retried", n)
			}
		})
	}
}

func TestTEIWrongCount(t *testing.T) {
	f := newFake(t, TEI, 4)
	f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
		writeJSON(w, 200, [][]float32{{1, 2, 3, 4}})
		return true
	}
	c := mustNew(t, fastOptions(TEI, f.URL))
	if _, err := c.Embed(context.Background(), texts(3)); !errors.Is(err, ErrResponse) || !strings.Contains(err.Error(), "1 vectors for 3 texts") {
		t.Fatalf("error %v, want ErrResponse for a wrong count", err)
	}
}

func TestDimsFixedAcrossResponses(t *testing.T) {
	f := newFake(t, OpenAI, 4)
	f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
		if n == 2 {
			f.Config.Dims = 5
		}
		return false
	}
	o := fastOptions(OpenAI, f.URL)
	o.Concurrency = 1
	c := mustNew(t, o)
	if _, err := c.Embed(context.Background(), texts(3)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Embed(context.Background(), texts(3))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "want 4 as the first response has") {
		t.Fatalf("error %v, want ErrMismatch against the first response", err)
	}
}

func TestModelMismatchOpenAI(t *testing.T) {
	a, b := newFake(t, OpenAI, 4), newFake(t, OpenAI, 4)
	b.Config.Model = "another-model"
	o := fastOptions(OpenAI, a.URL, b.URL)
	o.BatchTexts, o.Concurrency = 1, 1
	c := mustNew(t, o)
	_, err := c.Embed(context.Background(), texts(4))
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `"another-model"`) {
		t.Fatalf("error %v, want ErrMismatch naming the other model", err)
	}
}

func TestReorderedIndex(t *testing.T) {
	f := newFake(t, OpenAI, 6)
	f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
		order := make([]int, len(s.Inputs))
		for i := range order {
			order[i] = len(order) - 1 - i
		}
		writeJSON(w, 200, f.openaiBody(s.Inputs, n%2 == 0, order))
		return true
	}
	o := fastOptions(OpenAI, f.URL)
	o.BatchTexts = 9
	c := mustNew(t, o)
	in := texts(40)
	out, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, out, in, 6)
}

func TestRoundRobin(t *testing.T) {
	fakes := []*fake{newFake(t, OpenAI, 4), newFake(t, OpenAI, 4), newFake(t, OpenAI, 4)}
	o := fastOptions(OpenAI, fakes[0].URL, fakes[1].URL, fakes[2].URL)
	o.BatchTexts = 5
	c := mustNew(t, o)
	in := texts(60)
	out, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, out, in, 4)
	st := c.Stats()
	for i, f := range fakes {
		if n := len(f.Received()); n != 4 {
			t.Errorf("endpoint %d got %d requests, want 4", i, n)
		}
		if e := st.Endpoints[i]; e.Requests != 4 || e.Texts != 20 || e.URL != f.URL+"/embeddings" {
			t.Errorf("endpoint %d stats %+v", i, e)
		}
	}
}

func TestDeadEndpointRetriedElsewhere(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	live := newFake(t, OpenAI, 4)
	o := fastOptions(OpenAI, dead, live.URL)
	o.BatchTexts = 2
	c := mustNew(t, o)
	in := texts(10)
	out, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, out, in, 4)
	st := c.Stats()
	if st.Endpoints[0].Errors == 0 || st.Endpoints[0].Texts != 0 || st.Endpoints[1].Texts != 10 {
		t.Errorf("stats %+v", st)
	}
}

func TestConcurrencyInFlight(t *testing.T) {
	f := newFake(t, OpenAI, 4)
	f.Config.Delay = 40 * time.Millisecond
	o := fastOptions(OpenAI, f.URL)
	o.BatchTexts, o.Concurrency = 2, 3
	c := mustNew(t, o)
	start := time.Now()
	if _, err := c.Embed(context.Background(), texts(24)); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	if m := f.MaxInFlight(); m != 3 {
		t.Errorf("%d requests in flight at most, want 3", m)
	}
	// 12 requests of 40 ms, 3 at a time: about 160 ms with one in flight.
	if busy := c.Stats().Busy; busy < 150*time.Millisecond || busy > wall {
		t.Errorf("busy %v, want between 150ms and the call's %v", busy, wall)
	}
}

func TestConcurrencySharedByCalls(t *testing.T) {
	f := newFake(t, OpenAI, 4)
	f.Config.Delay = 30 * time.Millisecond
	o := fastOptions(OpenAI, f.URL)
	o.BatchTexts, o.Concurrency = 1, 2
	c := mustNew(t, o)
	done := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.Embed(context.Background(), texts(4))
			done <- err
		}()
	}
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if m := f.MaxInFlight(); m != 2 {
		t.Errorf("%d requests in flight at most over three calls, want 2", m)
	}
}

func TestBatching(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       []string
		maxTexts int
		maxBytes int
		want     []int // texts per request
	}{
		{"by texts", texts(23), 5, 1 << 20, []int{5, 5, 5, 5, 3}},
		{"by bytes", []string{"aaaa", "bbbb", "cccc", "dddd", "eeeeeeeeeeeeeee", "ffff", "gggg", "hhhh"}, 100, 10, []int{2, 2, 1, 2, 1}},
		{"both", []string{"aa", "bb", "cc", "dd", "ee", "ffffff", "gg"}, 3, 8, []int{3, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, OpenAI, 4)
			o := fastOptions(OpenAI, f.URL)
			o.BatchTexts, o.BatchBytes, o.Concurrency = tc.maxTexts, tc.maxBytes, 1
			c := mustNew(t, o)
			out, usage, err := c.EmbedWithUsage(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, out, tc.in, 4)
			var got []int
			for _, r := range f.Received() {
				got = append(got, len(r.Inputs))
			}
			if !equalInts(got, tc.want) {
				t.Errorf("texts per request %v, want %v", got, tc.want)
			}
			first := 0
			for i, u := range usage {
				if u.First != first || u.Last != first+tc.want[i]-1 {
					t.Errorf("usage %d covers %d..%d, want %d..%d", i, u.First, u.Last, first, first+tc.want[i]-1)
				}
				first += tc.want[i]
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCancel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool
	}{
		{"during a request", func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return true
		}},
		{"during a backoff", func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Retry-After", "30")
			writeJSON(w, 503, map[string]any{"error": "busy"})
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, OpenAI, 4)
			f.Config.Handle = tc.handle
			o := fastOptions(OpenAI, f.URL)
			o.BackoffMax, o.Timeout = time.Minute, time.Minute
			c := mustNew(t, o)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := c.Embed(ctx, texts(50))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("returned %v after the cancel", d)
			}
		})
	}
	c := mustNew(t, fastOptions(OpenAI, "http://127.0.0.1:1"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Embed(ctx, texts(2)); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v with a cancelled context, want context.Canceled", err)
	}
}

func TestInputChecks(t *testing.T) {
	var requests atomic.Int64
	f := newFake(t, OpenAI, 4)
	f.Config.Handle = func(n int, s remotetest.Request, w http.ResponseWriter, r *http.Request) bool {
		requests.Add(1)
		return false
	}
	c := mustNew(t, fastOptions(OpenAI, f.URL))
	out, err := c.Embed(context.Background(), nil)
	if err != nil || out == nil || len(out) != 0 {
		t.Errorf("no texts: %v, %v; want an empty result", out, err)
	}
	if _, err := c.Embed(context.Background(), []string{"ok", "bad \xff byte"}); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "text 1") {
		t.Errorf("error %v, want ErrInput naming text 1", err)
	}
	if requests.Load() != 0 {
		t.Errorf("%d requests sent", requests.Load())
	}
	// JSON escaping of quotes, backslashes, newlines, HTML and non-ASCII.
	in := []string{`say "hi"`, `back\slash`, "line\nbreak", "<b>&</b>", "naïve 日本語 🙂"}
	out, err = c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, out, in, 4)
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		text string
	}{
		{"no endpoint", Options{}, "no endpoint"},
		{"bad scheme", Options{Endpoints: []string{"ftp://h/x"}}, "http or https"},
		{"no host", Options{Endpoints: []string{"http://"}}, "http or https"},
		{"query", Options{Endpoints: []string{"http://h/v1?x=1"}}, "no query"},
		{"credentials hidden", Options{Endpoints: []string{"ftp://user:hunter2@h/"}}, "xxxxx"},
		{"tei base64", Options{API: TEI, Encoding: Base64, Endpoints: []string{"http://h"}}, "no base64"},
		{"tei input type", Options{API: TEI, InputType: "query", Endpoints: []string{"http://h"}}, "no input_type"},
		{"openai normalize", Options{NoNormalize: true, Endpoints: []string{"http://h"}}, "tei setting"},
		{"negative", Options{BatchTexts: -1, Endpoints: []string{"http://h"}}, "batch texts -1"},
		{"kind", Options{API: API(7), Endpoints: []string{"http://h"}}, "api(7)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.text) || strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error %v, want ErrOptions with %q", err, tc.text)
			}
		})
	}
	c, err := New(Options{Endpoints: []string{"http://a:1/v1/", "http://b:2"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.opts.BatchTexts != DefaultBatchTexts || c.opts.Concurrency != 4 || c.opts.MaxRetries != DefaultMaxRetries ||
		c.opts.Timeout != DefaultTimeout || c.endpoints[0].embed != "http://a:1/v1/embeddings" {
		t.Errorf("defaults %+v, endpoints %+v", c.opts, c.endpoints)
	}
	c, _ = New(Options{API: TEI, MaxRetries: -1, Endpoints: []string{"https://h/tei"}})
	if c.opts.MaxRetries != 0 || c.endpoints[0].embed != "https://h/tei/embed" || c.Info().Endpoints[0] != "https://h/tei/embed" {
		t.Errorf("tei endpoint %+v, max retries %d", c.endpoints[0], c.opts.MaxRetries)
	}
}

func TestParseAPIEncoding(t *testing.T) {
	for _, k := range []API{OpenAI, TEI} {
		if got, err := ParseAPI(strings.ToUpper(k.String())); err != nil || got != k {
			t.Errorf("ParseAPI(%v) = %v, %v", k, got, err)
		}
	}
	for _, e := range []Encoding{Float, Base64} {
		if got, err := ParseEncoding(e.String()); err != nil || got != e {
			t.Errorf("ParseEncoding(%v) = %v, %v", e, got, err)
		}
	}
	if _, err := ParseAPI("grpc"); !errors.Is(err, ErrOptions) {
		t.Errorf("ParseAPI(grpc): %v", err)
	}
	if _, err := ParseEncoding("fp16"); !errors.Is(err, ErrOptions) {
		t.Errorf("ParseEncoding(fp16): %v", err)
	}
}

func TestCredentialsNotShown(t *testing.T) {
	for _, tc := range []struct{ name, url, want string }{
		{"userinfo", "http://user:pa55word@h/v1", "$MSRAG_API_KEY"},
		{"query string", "http://h/v1?api_key=pa55word", "api_key=xxxxx"},
		{"query string of a bad URL", "http://h:x/v1?key=pa55word", "xxxxx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(Options{Endpoints: []string{tc.url}})
			if !errors.Is(err, ErrOptions) || strings.Contains(err.Error(), "pa55word") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v: want ErrOptions with %q and no password", err, tc.want)
			}
		})
	}
	_, err := ParseModelSpec("openai:http://h/v1?key=pa55word#m")
	if err == nil || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("ParseModelSpec: %v: want an error without the secret", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/v1":                         "http://h/v1",
		"openai:http://u:pw@h/v1?k=s&x=y#m":   "openai:http://u:xxxxx@h/v1?k=xxxxx&x=xxxxx#m",
		"tei:https://h:8080":                  "tei:https://h:8080",
		"http://h:x/v1?token=s":               "http://h:x/v1?xxxxx",
		"openai:http://u:pw@h:port/v1?key=ss": "openai:http://u:xxxxx@h:port/v1?xxxxx",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
