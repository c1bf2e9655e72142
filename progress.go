package msrag

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Progress counts what a build has done. Its counters are updated by the
// pipeline stages and read by a reporter; all methods are safe for concurrent use.
type Progress struct {
	Docs    atomic.Int64 // documents read
	Chunks  atomic.Int64 // unique chunks embedded
	Tokens  atomic.Int64 // content tokens embedded
	Skipped atomic.Int64 // documents skipped (empty text)

	// Done and Total are the fraction of the input read so far, in any unit the
	// reader knows (bytes, rows); Total 0 means unknown, and no ETA is shown.
	Done, Total atomic.Int64

	start time.Time
}

// reporter writes progress to w: a bar redrawn in place when w is a terminal, a
// log line every interval otherwise.
type reporter struct {
	p        *Progress
	w        io.Writer
	tty      bool
	interval time.Duration
	label    string

	stop chan struct{}
	wg   sync.WaitGroup
}

// startReporter starts reporting p to w (nil w: no output). Call stop when done.
func startReporter(p *Progress, w io.Writer, label string) *reporter {
	p.start = time.Now()
	r := &reporter{p: p, w: w, label: label, stop: make(chan struct{})}
	if w == nil {
		return r
	}
	r.interval = 5 * time.Second
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		r.tty = true
		r.interval = 250 * time.Millisecond
	}
	r.wg.Add(1)
	go r.loop()
	return r
}

func (r *reporter) loop() {
	defer r.wg.Done()
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.print(false)
		}
	}
}

// finish stops the reporter and prints a last line.
func (r *reporter) finish() {
	if r.w == nil {
		return
	}
	close(r.stop)
	r.wg.Wait()
	r.print(true)
}

func (r *reporter) print(final bool) {
	p := r.p
	el := time.Since(p.start)
	docs, chunks, toks := p.Docs.Load(), p.Chunks.Load(), p.Tokens.Load()
	rate := float64(toks) / max(el.Seconds(), 1e-9)
	line := fmt.Sprintf("%s: %d docs, %d chunks, %.0f tokens/s, %s", r.label, docs, chunks, rate, el.Round(time.Second))
	done, total := p.Done.Load(), p.Total.Load()
	frac := -1.0
	if total > 0 {
		frac = min(float64(done)/float64(total), 1)
		if frac > 0 && !final {
			eta := time.Duration(float64(el) * (1 - frac) / frac)
			line += fmt.Sprintf(", ETA %s", eta.Round(time.Second))
		}
	}
	if s := p.Skipped.Load(); s > 0 {
		line += fmt.Sprintf(", %d skipped", s)
	}
	if !r.tty {
		fmt.Fprintln(r.w, line)
		return
	}
	bar := ""
	if frac >= 0 {
		const width = 24
		n := int(frac * width)
		bar = fmt.Sprintf("[%s%s] %3.0f%% ", strings.Repeat("#", n), strings.Repeat(".", width-n), frac*100)
	}
	end := ""
	if final {
		end = "\n"
	}
	fmt.Fprintf(r.w, "\r\x1b[K%s%s%s", bar, line, end)
}
