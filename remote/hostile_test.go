package remote

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/msrag/msrag/remote/remotetest"
)

// TestHostileServer runs the client against every fault of remotetest, in
// each API shape: every one is an error of the right kind naming the batch,
// within the request timeout, and a huge body costs a bounded allocation.
func TestHostileServer(t *testing.T) {
	const dims = 8
	cases := []struct {
		fault remotetest.Fault
		kind  error
		text  string
	}{
		{remotetest.Fault{Kind: remotetest.ZeroVectors}, ErrResponse, "text 0: all 8 values are zero"},
		{remotetest.Fault{Kind: remotetest.NaN}, ErrResponse, "texts 0..2"},
		{remotetest.Fault{Kind: remotetest.WrongCount}, ErrResponse, "2 vectors for 3 texts"},
		{remotetest.Fault{Kind: remotetest.ChangingDims, After: 1}, ErrMismatch, "vector of 9 dims, want 8 as the first response has"},
		{remotetest.Fault{Kind: remotetest.HugeBody}, ErrResponse, "response body over"},
		{remotetest.Fault{Kind: remotetest.HugeError}, ErrStatus, "status 500 internal server error: the server is overloaded xxx"},
		{remotetest.Fault{Kind: remotetest.SlowHeaders}, ErrTransport, "no answer within the timeout of 300ms"},
		{remotetest.Fault{Kind: remotetest.SlowBody}, ErrTransport, "no answer within the timeout of 300ms"},
		{remotetest.Fault{Kind: remotetest.ResetMidBody}, ErrTransport, "reading the response"},
		{remotetest.Fault{Kind: remotetest.Status, Status: 503, Message: "down for maintenance"}, ErrStatus, "status 503 service unavailable: down for maintenance"},
	}
	for _, api := range []struct {
		name string
		kind API
		enc  Encoding
	}{{"openai-float", OpenAI, Float}, {"openai-base64", OpenAI, Base64}, {"tei", TEI, Float}} {
		for _, tc := range cases {
			t.Run(api.name+"/"+tc.fault.Kind.String(), func(t *testing.T) {
				srv := remotetest.NewServer(remotetest.Config{Dims: dims})
				defer srv.Close()
				srv.SetFault(tc.fault)
				base := srv.URL
				if api.kind == OpenAI {
					base = srv.OpenAIURL()
				}
				o := fastOptions(api.kind, base)
				o.Encoding, o.Timeout, o.MaxRetries = api.enc, 300*time.Millisecond, -1
				c := mustNew(t, o)
				if tc.fault.After > 0 { // a first, correct call fixes the dimensions
					if _, err := c.Embed(context.Background(), texts(3)); err != nil {
						t.Fatal(err)
					}
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				t0 := time.Now()
				_, err := c.Embed(context.Background(), texts(3))
				elapsed := time.Since(t0)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), "texts 0..2 at "+srv.URL) {
					t.Fatalf("error %v, want %v with %q naming texts 0..2", err, tc.kind, tc.text)
				}
				if len(err.Error()) > 1000 {
					t.Errorf("error of %d bytes: %.200s...", len(err.Error()), err)
				}
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
					t.Errorf("the call allocated %d MiB", alloc>>20)
				}
				if elapsed > 10*time.Second {
					t.Errorf("the call took %v", elapsed)
				}
			})
		}
	}
}

func TestBodyLimit(t *testing.T) {
	// 32 texts of 384 floats: the margin covers JSON of any float notation.
	got := bodyLimit(32, 384, Float)
	if need := int64(32 * 384 * len("-1.2345678901234567e-05, ")); got < need*3/2 || got > 8*need {
		t.Errorf("bodyLimit(32, 384, float) = %d, want between %d and %d", got, need*3/2, 8*need)
	}
	if b64, f := bodyLimit(32, 384, Base64), bodyLimit(32, 384, Float); b64 >= f || b64 < 32*384*4*4/3 {
		t.Errorf("bodyLimit base64 %d, float %d", b64, f)
	}
	if unknown := bodyLimit(1, 0, Float); unknown < maxDimsUnknown*floatBytes {
		t.Errorf("bodyLimit before the dimensions are known: %d", unknown)
	}
}

// TestRetriedFaultRecovers checks that a transient fault (one reset, one
// slow answer) is retried and the call gives the right rows.
func TestRetriedFaultRecovers(t *testing.T) {
	for _, k := range []remotetest.FaultKind{remotetest.ResetMidBody, remotetest.SlowHeaders, remotetest.SlowBody} {
		t.Run(k.String(), func(t *testing.T) {
			srv := remotetest.NewServer(remotetest.Config{Dims: 4})
			defer srv.Close()
			srv.SetFault(remotetest.Fault{Kind: k, Times: 1})
			o := fastOptions(OpenAI, srv.OpenAIURL())
			o.Timeout = 300 * time.Millisecond
			c := mustNew(t, o)
			in := texts(5)
			out, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, out, in, 4)
			if st := c.Stats(); st.Retries != 1 {
				t.Errorf("%d retries, want 1", st.Retries)
			}
		})
	}
}
