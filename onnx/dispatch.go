package onnx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// worker is one session as the batches of a call are handed out: the
// Embedder it belongs to and the session.
type worker struct {
	e *Embedder
	s *session
}

// workers returns the Embedder's sessions as workers.
func (e *Embedder) workers() []worker {
	ws := make([]worker, len(e.sessions))
	for i, s := range e.sessions {
		ws[i] = worker{e, s}
	}
	return ws
}

// errStopped ends a worker that waits for its turn once another has failed.
var errStopped = errors.New("onnx: stopped after another session failed")

// dispatch hands the batches of one call out to sessions: a session takes
// the next batch not yet taken as soon as it is free, so the batches run in
// the order of the plan, several at a time. With ordered, the outputs are
// handed over one batch at a time in that order, as one session would hand
// them over (for a caller that adds them up); otherwise each as its run ends
// (rows of different batches are disjoint).
type dispatch struct {
	full    [][]int32
	order   []int
	batches []batch
	ordered bool
	taken   atomic.Int64

	mu      sync.Mutex
	turn    *sync.Cond
	handed  int // batches handed over, when ordered
	stopped bool
}

// runAll plans the batches of full as ws[0]'s Embedder plans them and runs
// them on the workers, at most one goroutine each, handing every sequence's
// output to the rowFunc rowOf gives for its worker's Embedder.
func runAll(ctx context.Context, ws []worker, full [][]int32, rowOf func(*Embedder) rowFunc, ordered bool) error {
	lens := make([]int, len(full))
	for i, s := range full {
		lens[i] = len(s)
	}
	d := &dispatch{full: full, ordered: ordered}
	d.order, d.batches = ws[0].e.plan(lens)
	d.turn = sync.NewCond(&d.mu)
	ws = ws[:min(len(ws), len(d.batches))]
	if len(ws) <= 1 {
		if len(ws) == 0 {
			return nil
		}
		return d.work(ctx, ws[0], rowOf(ws[0].e))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for k, w := range ws {
		wg.Go(func() {
			err := d.work(ctx, w, rowOf(w.e))
			if err == nil {
				return
			}
			d.stop()
			cancel()
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errStopped) {
				errs[k] = err
			} else {
				errs[k] = fmt.Errorf("onnx: session %d of %d: %w", k+1, len(ws), err)
			}
		})
	}
	wg.Wait()
	return firstCause(errs)
}

// firstCause returns the error that stopped a call: the first one that is
// neither a worker stopped by it nor cancelled by it, else the first.
func firstCause(errs []error) error {
	var first error
	for _, err := range errs {
		switch {
		case err == nil:
		case !errors.Is(err, errStopped) && !errors.Is(err, context.Canceled):
			return err
		case first == nil || errors.Is(first, errStopped):
			first = err
		}
	}
	return first
}

// work runs batches on w until none is left, the context is done or a run
// fails.
func (d *dispatch) work(ctx context.Context, w worker, row rowFunc) error {
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("onnx: embedding: %w", err)
		}
		done, err := d.next(w, row)
		if err != nil || done {
			return err
		}
	}
}

// next takes the next batch and runs it on w's session, holding the session
// from taking the batch to handing its output over; done when no batch is
// left. A batch is taken only by a worker holding its session, so the
// earliest batch not yet handed over is always running, never waiting.
func (d *dispatch) next(w worker, row rowFunc) (done bool, err error) {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	j := int(d.taken.Add(1)) - 1
	if j >= len(d.batches) {
		return true, nil
	}
	b := d.batches[j]
	idx := d.order[b.lo:b.hi]
	states, err := w.e.runBatch(s, d.full, idx, b.seqLen)
	if err != nil {
		return true, err
	}
	if !d.await(j) {
		return true, errStopped
	}
	err = w.e.handOver(s, d.full, idx, b.seqLen, states, row)
	d.pass()
	return false, err
}

// await waits, when ordered, until batch j is the next to hand over; false
// when the call was stopped meanwhile.
func (d *dispatch) await(j int) bool {
	if !d.ordered {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.handed != j && !d.stopped {
		d.turn.Wait()
	}
	return !d.stopped
}

// pass lets the next batch hand its output over, when ordered.
func (d *dispatch) pass() {
	if !d.ordered {
		return
	}
	d.mu.Lock()
	d.handed++
	d.mu.Unlock()
	d.turn.Broadcast()
}

// stop ends the waits of the other workers after a failure.
func (d *dispatch) stop() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.turn.Broadcast()
}
