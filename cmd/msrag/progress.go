package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/msrag/msrag"
)

// progressBar draws a build's progress on w: a bar redrawn in place when w
// is a terminal, a log line every few seconds otherwise.
type progressBar struct {
	w        io.Writer
	label    string
	tty      bool
	interval time.Duration
	mu       sync.Mutex
	last     time.Time // the last drawing, or when the bar was made
	drawn    bool
	p        msrag.Progress
}

// newProgressBar returns the bar for w, or nil when w is nil (no progress).
func newProgressBar(w io.Writer, label string) *progressBar {
	if w == nil {
		return nil
	}
	b := &progressBar{w: w, label: label, interval: 5 * time.Second, last: time.Now()}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		b.tty, b.interval = true, 250*time.Millisecond
	}
	return b
}

// update is msrag.Config.Progress: it draws at most once per interval.
func (b *progressBar) update(p msrag.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.p = p
	if time.Since(b.last) < b.interval {
		return
	}
	b.last, b.drawn = time.Now(), true
	b.draw(false)
}

// callback returns update, or nil for a nil bar.
func (b *progressBar) callback() func(msrag.Progress) {
	if b == nil {
		return nil
	}
	return b.update
}

// finish draws the last state and ends the line, when the bar has been
// drawn at all (a build shorter than one interval prints nothing).
func (b *progressBar) finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		b.draw(true)
	}
}

func (b *progressBar) draw(final bool) {
	p := b.p
	rate := float64(p.Tokens) / max(p.Elapsed.Seconds(), 1e-9)
	line := fmt.Sprintf("%s: %d docs, %d chunks, %.0f tokens/s, %s", b.label, p.Docs, p.Chunks, rate, p.Elapsed.Round(time.Second))
	frac := -1.0
	if p.UnitsTotal > 0 {
		frac = min(float64(p.UnitsDone)/float64(p.UnitsTotal), 1)
		if frac > 0 && !final {
			eta := time.Duration(float64(p.Elapsed) * (1 - frac) / frac)
			line += fmt.Sprintf(", ETA %s", eta.Round(time.Second))
		}
	}
	if p.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", p.Skipped)
	}
	if !b.tty {
		fmt.Fprintln(b.w, line)
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
	fmt.Fprintf(b.w, "\r\x1b[K%s%s%s", bar, line, end)
}
