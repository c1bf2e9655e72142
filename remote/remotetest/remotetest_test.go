package remotetest_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/msrag/msrag/remote/remotetest"
)

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// TestShapes decodes each route's answer with encoding/json.
func TestShapes(t *testing.T) {
	srv := remotetest.NewServer(remotetest.Config{Dims: 3})
	defer srv.Close()
	_, b := post(t, srv.OpenAIURL()+"/embeddings", `{"input": ["a b", "c"], "encoding_format": "base64"}`)
	var oa struct {
		Data []struct {
			Index     int    `json:"index"`
			Embedding string `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(b, &oa); err != nil || len(oa.Data) != 2 || oa.Model != "remotetest-model" || oa.Usage.PromptTokens != 4+3 {
		t.Fatalf("openai answer %s: %v", b, err)
	}
	raw, _ := base64.StdEncoding.DecodeString(oa.Data[1].Embedding)
	want := remotetest.Vector("c", 3)
	for i := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != want[i] {
			t.Errorf("base64 value %d = %v, want %v", i, got, want[i])
		}
	}
	_, b = post(t, srv.URL+"/embed", `{"inputs": ["a b"]}`)
	var tei [][]float32
	if err := json.Unmarshal(b, &tei); err != nil || len(tei) != 1 || len(tei[0]) != 3 || tei[0][0] != remotetest.Vector("a b", 3)[0] {
		t.Fatalf("tei answer %s: %v", b, err)
	}
	if srv.Requests() != 2 || len(srv.Received()) != 2 || !srv.Received()[1].TEI() {
		t.Errorf("requests %d, received %+v", srv.Requests(), srv.Received())
	}
}

// TestFaults checks what a few faults put on the wire.
func TestFaults(t *testing.T) {
	srv := remotetest.NewServer(remotetest.Config{Dims: 2})
	defer srv.Close()
	srv.SetFault(remotetest.Fault{Kind: remotetest.HugeBody, Bytes: 1 << 20})
	res, b := post(t, srv.URL+"/embed", `{"inputs": ["a"]}`)
	if res.StatusCode != 200 || len(b) != 1<<20 {
		t.Errorf("huge body: status %d, %d bytes", res.StatusCode, len(b))
	}
	srv.SetFault(remotetest.Fault{Kind: remotetest.NaN})
	_, b = post(t, srv.URL+"/embed", `{"inputs": ["a"]}`)
	if !bytes.HasPrefix(b, []byte("[[NaN,")) {
		t.Errorf("nan: %s", b)
	}
	srv.SetFault(remotetest.Fault{Kind: remotetest.Status, Status: 429, Message: "slow down", RetryAfter: "2", Times: 1, After: srv.Requests()})
	res, b = post(t, srv.URL+"/embed", `{"inputs": ["a"]}`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "2" || !bytes.Contains(b, []byte("slow down")) {
		t.Errorf("status: %d %q %s", res.StatusCode, res.Header.Get("Retry-After"), b)
	}
	if res, _ = post(t, srv.URL+"/embed", `{"inputs": ["a"]}`); res.StatusCode != 200 {
		t.Errorf("after Times: status %d", res.StatusCode)
	}
	for _, v := range [][]float32{remotetest.Vector("", 1), remotetest.Vector("x", 4)} {
		zero := true
		for _, x := range v {
			zero = zero && x == 0
		}
		if zero {
			t.Errorf("Vector gave all zeros: %v", v)
		}
	}
}
