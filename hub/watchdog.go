package hub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// DefaultTimeout is the longest a request waits, when Options.Timeout is 0,
// for a connection and the response's headers, and then for each next piece
// of its body.
const DefaultTimeout = time.Minute

// ErrTimeout reports a hub that did not answer, or stopped sending, within
// the timeout; it is wrapped together with ErrTransfer.
var ErrTimeout = errors.New("no progress within the time limit")

// watchdog cancels a request when it makes no progress for d: no response
// headers within d of the start, then no body bytes for d.
type watchdog struct {
	t      *time.Timer
	d      time.Duration
	cancel context.CancelCauseFunc
}

// watch returns a context for one request that a watchdog cancels after d
// without progress.
func watch(ctx context.Context, d time.Duration, what string) (context.Context, *watchdog) {
	rctx, cancel := context.WithCancelCause(ctx)
	w := &watchdog{d: d, cancel: cancel}
	w.t = time.AfterFunc(d, func() {
		cancel(fmt.Errorf("%w: %s: nothing received for %s (see --request-timeout)", ErrTimeout, what, d))
	})
	return rctx, w
}

// progress restarts the time limit.
func (w *watchdog) progress() { w.t.Reset(w.d) }

// stop ends the watch and releases the request's context.
func (w *watchdog) stop() {
	w.t.Stop()
	w.cancel(nil)
}

// cause returns the watchdog's error when it cancelled ctx, else err.
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && c != context.Canceled && err != nil {
		return c
	}
	return err
}

// watchedBody is a response body whose reads restart the watchdog; Close
// stops it.
type watchedBody struct {
	io.ReadCloser
	ctx context.Context
	w   *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.progress()
	}
	if err != nil && err != io.EOF {
		err = cause(b.ctx, err)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.stop()
	return err
}

// maxAnswer bounds a listing page or a revision answer: a page of a
// thousand entries is a few hundred KiB.
const maxAnswer = 64 << 20

// limited returns r cut off with an error after maxAnswer bytes, so that a
// hub answering without end cannot fill memory.
func limited(r io.Reader) io.Reader { return &capReader{r: r, left: maxAnswer} }

type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("%w: the answer is longer than %d bytes", ErrTransfer, int64(maxAnswer))
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
