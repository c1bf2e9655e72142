package clock

import (
	"testing"
	"time"
)

// TestBusyCountsCallsInFlight: a call in flight counts up to now, before it
// ends; once it ends the time stays.
func TestBusyCountsCallsInFlight(t *testing.T) {
	var c Busy
	if c.Elapsed() != 0 {
		t.Fatalf("zero Busy: %v", c.Elapsed())
	}
	c.Begin()
	time.Sleep(20 * time.Millisecond)
	if got := c.Elapsed(); got < 20*time.Millisecond {
		t.Fatalf("a call in flight for 20ms: busy %v", got)
	}
	c.End()
	done := c.Elapsed()
	time.Sleep(20 * time.Millisecond)
	if got := c.Elapsed(); got != done {
		t.Fatalf("idle time counted: %v after the call, %v later", done, got)
	}
}

// TestBusyCountsOverlapsOnce: two calls that overlap count the union of
// their times, not the sum, and the clock stops only when the last ends.
func TestBusyCountsOverlapsOnce(t *testing.T) {
	var c Busy
	start := time.Now()
	c.Begin()
	time.Sleep(10 * time.Millisecond)
	c.Begin()
	time.Sleep(10 * time.Millisecond)
	c.End()
	time.Sleep(10 * time.Millisecond)
	c.End()
	wall := time.Since(start)
	got := c.Elapsed()
	if got < 30*time.Millisecond || got > wall {
		t.Fatalf("busy %v, want at least 30ms (the union) and at most the wall time %v", got, wall)
	}
}

func TestBusyEndWithoutBeginPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("End without Begin did not panic")
		}
	}()
	var c Busy
	c.End()
}
