package main

import (
	"fmt"
	"io"
	"math"
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
	line := progressLine(b.label, p, final)
	if !b.tty {
		fmt.Fprintln(b.w, line)
		return
	}
	bar := ""
	if frac, _ := estimate(p); frac >= 0 {
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

// progressLine is one line of a build's progress: documents, chunks (of the
// total once known), rate, time so far, how far the corpus is read when the
// chunk total is not known yet, and the time left (not on the final line).
//
//	index: 5183 docs, 10116 chunks, 32825 tokens/s, 35s, corpus 43% read, ~46s left
//	index: 9120 docs, chunks 17101/17912, 32825 tokens/s, 1m2s, ~3s left
func progressLine(label string, p msrag.Progress, final bool) string {
	rate := float64(p.Tokens) / max(p.Elapsed.Seconds(), 1e-9)
	chunks := fmt.Sprintf("%d chunks", p.Chunks)
	if p.ChunksTotal > 0 {
		chunks = fmt.Sprintf("chunks %d/%d", p.Chunks, p.ChunksTotal)
	}
	line := fmt.Sprintf("%s: %d docs, %s, %.0f tokens/s, %s", label, p.Docs, chunks, rate, p.Elapsed.Round(time.Second))
	frac, basis := estimate(p)
	if basis != "" && p.ChunksTotal == 0 {
		line += ", " + basis
	}
	if frac > 0 && !final {
		line += fmt.Sprintf(", ~%s left", timeLeft(p.Elapsed, frac))
	}
	if p.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", p.Skipped)
	}
	return line
}

// estimate returns the fraction of a build done, in [0, 1], and what it is
// measured by: the chunks embedded of the total once every document is cut,
// else the corpus units read of those expected, else the bytes of the
// corpus file read (a gzip'd file's as stored). It is -1 when none is
// known, and when the corpus is read but not yet cut: the reader runs a
// few batches ahead of the embedder, so the share read, a fair measure
// until then, says nothing of the batches still to embed.
func estimate(p msrag.Progress) (float64, string) {
	var done, total int64
	var basis string
	switch {
	case p.ChunksTotal > 0:
		return min(float64(p.Chunks)/float64(p.ChunksTotal), 1), fmt.Sprintf("chunks %d/%d", p.Chunks, p.ChunksTotal)
	case p.UnitsTotal > 0:
		done, total, basis = p.UnitsDone, p.UnitsTotal, fmt.Sprintf("units %d/%d", p.UnitsDone, p.UnitsTotal)
	case p.BytesTotal > 0:
		done, total = p.BytesDone, p.BytesTotal
		basis = fmt.Sprintf("corpus %.0f%% read", math.Floor(100*float64(done)/float64(total)))
	default:
		return -1, ""
	}
	if done >= total {
		return -1, basis
	}
	return float64(max(done, 0)) / float64(total), basis
}

// timeLeft extrapolates the time left from the time a fraction frac > 0
// took, to the second.
func timeLeft(elapsed time.Duration, frac float64) time.Duration {
	return time.Duration(float64(elapsed) * (1 - frac) / frac).Round(time.Second)
}
