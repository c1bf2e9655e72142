package remotetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// FaultKind is a way a server answers wrongly.
type FaultKind int

const (
	// NoFault answers correctly.
	NoFault FaultKind = iota
	// ZeroVectors answers every text with an all-zero vector.
	ZeroVectors
	// NaN puts a NaN in the first vector: its bits in base64, the token NaN
	// (as Python's json writes it) in a float array.
	NaN
	// WrongCount answers one vector fewer than the texts (one more for a
	// single text).
	WrongCount
	// ChangingDims answers with one dimension more than the first response
	// had, from the fault's start on.
	ChangingDims
	// HugeBody answers 200 with a JSON body of Fault.Bytes bytes, a vector
	// that never ends, written in pieces without holding it.
	HugeBody
	// HugeError answers Fault.Status (default 500) with an error message of
	// Fault.Bytes bytes.
	HugeError
	// SlowHeaders waits Fault.Delay (or until the client gives up) before
	// the headers of a correct answer.
	SlowHeaders
	// SlowBody sends the headers and half the body of a correct answer, then
	// waits Fault.Delay (or until the client gives up) before the rest.
	SlowBody
	// ResetMidBody sends the headers and half the body of a correct answer,
	// then drops the connection.
	ResetMidBody
	// Status answers Fault.Status with Fault.Message (and a Retry-After of
	// Fault.RetryAfter when set).
	Status
)

var faultNames = [...]string{"none", "zero-vectors", "nan", "wrong-count", "changing-dims", "huge-body", "huge-error",
	"slow-headers", "slow-body", "reset-mid-body", "status"}

// String returns the fault's name, such as "zero-vectors".
func (k FaultKind) String() string {
	if k < 0 || int(k) >= len(faultNames) {
		return "fault(" + strconv.Itoa(int(k)) + ")"
	}
	return faultNames[k]
}

// Fault is a FaultKind and where it applies.
type Fault struct {
	Kind FaultKind
	// After is the number of embedding requests answered correctly before
	// the fault starts (counted over the Server's life).
	After int
	// Times is the number of requests the fault hits; 0 is all from After on.
	Times int
	// Status is the HTTP status of Status and HugeError.
	Status int
	// Message is Status's error message.
	Message string
	// RetryAfter, when set, is sent as Status's Retry-After header.
	RetryAfter string
	// Bytes is the body size of HugeBody and HugeError; 0 is 256 MiB.
	Bytes int64
	// Delay is the wait of SlowHeaders and SlowBody; 0 is one hour.
	Delay time.Duration
}

// SetFault makes the Server answer with f from now on.
func (s *Server) SetFault(f Fault) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.fault = f
}

// faultFor returns the fault that hits request n, if any.
func (s *Server) faultFor(n int) (Fault, bool) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	f := s.fault
	if f.Kind == NoFault || n <= f.After || (f.Times > 0 && n > f.After+f.Times) {
		return f, false
	}
	if f.Bytes == 0 {
		f.Bytes = 256 << 20
	}
	if f.Delay == 0 {
		f.Delay = time.Hour
	}
	if f.Status == 0 {
		f.Status = http.StatusInternalServerError
	}
	return f, true
}

// answerFault writes the wrong answer f to request n.
func (s *Server) answerFault(f Fault, n int, req Request, w http.ResponseWriter, r *http.Request) {
	vecs := s.Vectors(req)
	switch f.Kind {
	case ZeroVectors:
		for i := range vecs {
			vecs[i] = make([]float32, len(vecs[i]))
		}
	case NaN:
		if len(vecs) > 0 && len(vecs[0]) > 0 {
			if req.Encoding() != "base64" {
				vecs[0][0] = nanMark
				writeRaw(w, http.StatusOK, bytes.Replace(mustJSON(s.body(req, vecs, nil)), []byte("0.3125"), []byte("NaN"), 1))
				return
			}
			vecs[0][0] = float32(math.NaN())
		}
	case WrongCount:
		if len(vecs) > 1 {
			vecs = vecs[:len(vecs)-1]
		} else {
			vecs = append(vecs, Vector("extra", s.Config.Dims))
		}
	case ChangingDims:
		for i := range vecs {
			vecs[i] = append(vecs[i], 0.5)
		}
	case HugeBody:
		hugeBody(w, f.Bytes)
		return
	case HugeError:
		hugeError(w, f.Status, f.Bytes)
		return
	case Status:
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		WriteError(w, f.Status, f.Message)
		return
	case SlowHeaders:
		if !wait(r, f.Delay) {
			return
		}
	case SlowBody, ResetMidBody:
		body := mustJSON(s.body(req, vecs, nil))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		if f.Kind == ResetMidBody || !wait(r, f.Delay) {
			panic(http.ErrAbortHandler) // drops the connection mid-body
		}
		w.Write(body[len(body)/2:])
		return
	}
	writeRaw(w, http.StatusOK, mustJSON(s.body(req, vecs, nil)))
}

// wait waits d or until the client goes; it reports whether d passed.
func wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// hugeBody writes 200 and a body of n bytes: an OpenAI-compatible response
// whose one vector never ends, in 64 KiB pieces.
func hugeBody(w http.ResponseWriter, n int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	head := []byte(`{"object":"list","model":"huge","data":[{"index":0,"embedding":[`)
	piece := bytes.Repeat([]byte("0.125,"), 64<<10/6)
	written, _ := w.Write(head)
	for left := n - int64(written); left > 0; {
		p := piece[:min(int64(len(piece)), left)]
		k, err := w.Write(p)
		if err != nil {
			return
		}
		left -= int64(k)
	}
}

// hugeError writes status and an error message of n bytes.
func hugeError(w http.ResponseWriter, status int, n int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	head := []byte(`{"error":{"message":"the server is overloaded `)
	piece := bytes.Repeat([]byte("x"), 64<<10)
	written, _ := w.Write(head)
	for left := n - int64(written); left > 0; {
		k, err := w.Write(piece[:min(int64(len(piece)), left)])
		if err != nil {
			return
		}
		left -= int64(k)
	}
	w.Write([]byte(`"}}`))
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// nanMark stands for the NaN of a float array until the body is encoded:
// no Vector value (a multiple of 1/1000) is 0.3125.
const nanMark = 0.3125

// mustJSON encodes v, which this package builds of encodable values.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("remotetest: %v", err))
	}
	return b
}
