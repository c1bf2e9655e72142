// Package clock measures the wall time during which work is in progress.
package clock

import (
	"sync"
	"time"
)

// Busy measures the wall time during which at least one call is in flight,
// so that calls at the same time are counted once. A call brackets its work
// with Begin and End; Elapsed counts the calls still in flight up to now. The
// zero Busy is ready to use; it is safe for concurrent use.
type Busy struct {
	mu       sync.Mutex
	inflight int
	since    time.Time // when inflight last rose from 0
	total    time.Duration
}

// Begin marks the start of a call.
func (c *Busy) Begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight == 0 {
		c.since = time.Now()
	}
	c.inflight++
}

// End marks the end of a call that Begin started.
func (c *Busy) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight == 0 {
		panic("clock: Busy.End without Begin")
	}
	c.inflight--
	if c.inflight == 0 {
		c.total += time.Since(c.since)
	}
}

// Elapsed returns the busy time so far, the calls in flight included.
func (c *Busy) Elapsed() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight > 0 {
		return c.total + time.Since(c.since)
	}
	return c.total
}
