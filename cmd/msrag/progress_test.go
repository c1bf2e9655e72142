package main

import (
	"testing"
	"time"

	"github.com/msrag/msrag"
)

// TestEstimate checks what a build's fraction done is measured by: the
// chunk total once known, else units, else the bytes of the corpus file.
func TestEstimate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     msrag.Progress
		frac  float64
		basis string
	}{
		{"nothing known", msrag.Progress{Docs: 10, Chunks: 20}, -1, ""},
		{"bytes of a gzip'd file", msrag.Progress{Chunks: 20, BytesDone: 1 << 20, BytesTotal: 4 << 20}, 0.25, "corpus 25% read"},
		{"bytes round down", msrag.Progress{BytesDone: 999, BytesTotal: 1000}, 0.999, "corpus 99% read"},
		{"units before bytes", msrag.Progress{UnitsDone: 3, UnitsTotal: 4, BytesDone: 1, BytesTotal: 4}, 0.75, "units 3/4"},
		{"chunk total before all", msrag.Progress{Chunks: 50, ChunksTotal: 200, UnitsDone: 4, UnitsTotal: 4, BytesDone: 4, BytesTotal: 4}, 0.25, "chunks 50/200"},
		{"units all read, not cut", msrag.Progress{UnitsDone: 4, UnitsTotal: 4}, -1, "units 4/4"},
		{"corpus read, not cut", msrag.Progress{Chunks: 300, BytesDone: 100, BytesTotal: 100}, -1, "corpus 100% read"},
		{"chunk total at most 1", msrag.Progress{Chunks: 5, ChunksTotal: 4}, 1, "chunks 5/4"},
		{"empty file", msrag.Progress{BytesTotal: 0, BytesDone: 0}, -1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frac, basis := estimate(tc.p)
			if frac != tc.frac || basis != tc.basis {
				t.Errorf("estimate = %v, %q; want %v, %q", frac, basis, tc.frac, tc.basis)
			}
		})
	}
}

// TestProgressLine checks the progress line: the chunk total and the time
// left once known, the share of the corpus read before, none of either
// when nothing says, and no time left on the final line.
func TestProgressLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     msrag.Progress
		final bool
		want  string
	}{
		{"unknown", msrag.Progress{Docs: 5183, Chunks: 10116, Tokens: 350000, Elapsed: 35 * time.Second}, false,
			"index: 5183 docs, 10116 chunks, 10000 tokens/s, 35s"},
		{"corpus read", msrag.Progress{Docs: 5183, Chunks: 10116, Tokens: 350000, Elapsed: 35 * time.Second, BytesDone: 40, BytesTotal: 100}, false,
			"index: 5183 docs, 10116 chunks, 10000 tokens/s, 35s, corpus 40% read, ~53s left"},
		{"chunk total", msrag.Progress{Docs: 9000, Chunks: 15000, ChunksTotal: 20000, Tokens: 600000, Elapsed: 60 * time.Second, BytesDone: 100, BytesTotal: 100}, false,
			"index: 9000 docs, chunks 15000/20000, 10000 tokens/s, 1m0s, ~20s left"},
		{"units", msrag.Progress{Docs: 10, Chunks: 30, Tokens: 100, Elapsed: 10 * time.Second, UnitsDone: 1, UnitsTotal: 3, Skipped: 2}, false,
			"index: 10 docs, 30 chunks, 10 tokens/s, 10s, units 1/3, ~20s left, 2 skipped"},
		{"final", msrag.Progress{Docs: 9000, Chunks: 20000, ChunksTotal: 20000, Tokens: 800000, Elapsed: 80 * time.Second}, true,
			"index: 9000 docs, chunks 20000/20000, 10000 tokens/s, 1m20s"},
		{"read, not cut: no time left", msrag.Progress{Docs: 1483, Chunks: 326, Tokens: 33000, Elapsed: 11 * time.Second, BytesDone: 100, BytesTotal: 100}, false,
			"index: 1483 docs, 326 chunks, 3000 tokens/s, 11s, corpus 100% read"},
		{"nothing done yet", msrag.Progress{Docs: 1, Elapsed: time.Second, BytesDone: 0, BytesTotal: 100}, false,
			"index: 1 docs, 0 chunks, 0 tokens/s, 1s, corpus 0% read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := progressLine("index", tc.p, tc.final); got != tc.want {
				t.Errorf("progressLine:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
