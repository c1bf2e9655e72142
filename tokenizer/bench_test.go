package tokenizer_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/tokenizer"
)

// benchTexts reads up to limit bytes of document texts of a data set in the
// cache (testfiles.Dataset); benchmarks skip when it is absent.
func benchTexts(tb testing.TB, set string, limit int) []string {
	tb.Helper()
	f, err := os.Open(filepath.Join(testfiles.Dataset(tb, set), "corpus.jsonl.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	var out []string
	total := 0
	for sc.Scan() && total < limit {
		var d struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatal(err)
		}
		out = append(out, d.Text)
		total += len(d.Text)
	}
	return out
}

// BenchmarkEncode measures content encoding (no special tokens, no
// truncation, as the chunker uses it) on SciFact abstracts and QMSum
// transcripts, on one goroutine and with EncodeBatch on all cores.
func BenchmarkEncode(b *testing.B) {
	corpora := []struct{ name, set string }{{"scifact", "scifact"}, {"qmsum", "qmsum"}}
	for _, g := range goldenTokenizers {
		for _, c := range corpora {
			b.Run(g.name+"/"+c.name, func(b *testing.B) {
				tok := loadTokenizer(b, g.path)
				texts := benchTexts(b, c.set, 4<<20)
				var bytes int64
				for _, t := range texts {
					bytes += int64(len(t))
				}
				opts := tokenizer.Options{NoSpecial: true, MaxLength: -1}
				b.Run("threads=1", func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(bytes)
					var tokens int
					var ms0, ms1 runtime.MemStats
					runtime.ReadMemStats(&ms0)
					for b.Loop() {
						tokens = 0
						for _, t := range texts {
							tokens += len(tok.EncodeWith(t, opts).IDs)
						}
					}
					runtime.ReadMemStats(&ms1)
					b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
					b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(tokens*b.N), "allocs/token")
				})
				b.Run("threads=all", func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(bytes)
					var tokens int
					for b.Loop() {
						tokens = 0
						for _, e := range tok.EncodeBatch(texts, opts) {
							tokens += len(e.IDs)
						}
					}
					b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
					b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "threads")
				})
			})
		}
	}
}
