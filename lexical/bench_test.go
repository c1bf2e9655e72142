package lexical

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/msrag/msrag/internal/testfiles"
)

// benchTexts returns SciFact's documents (title + " " + text), or skips.
func benchTexts(b *testing.B) []string {
	docs := readDocs(b, testfiles.Dataset(b, "scifact"))
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Full()
	}
	return texts
}

// BenchmarkAnalyzer analyses SciFact's documents; tokens/s counts words
// split (before stop words), terms/s what comes out.
func BenchmarkAnalyzer(b *testing.B) {
	texts := benchTexts(b)
	var size int64
	for _, t := range texts {
		size += int64(len(t))
	}
	words := 0
	tk := None.NewTokenizer()
	var buf []string
	for _, t := range texts {
		words += len(tk.Append(buf[:0], t))
	}
	for _, an := range []Analyzer{English, None} {
		b.Run(an.Name(), func(b *testing.B) {
			tk := an.NewTokenizer()
			var terms []string
			b.ReportAllocs()
			b.SetBytes(size)
			n := 0
			for b.Loop() {
				for _, t := range texts {
					terms = tk.Append(terms[:0], t)
					n += len(terms)
				}
			}
			b.ReportMetric(float64(words)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "terms/s")
		})
	}
}

// analysed returns the English terms of texts.
func analysed(texts []string) [][]string {
	tk := English.NewTokenizer()
	out := make([][]string, len(texts))
	for i, t := range texts {
		out[i] = tk.Append(nil, t)
	}
	return out
}

// BenchmarkBuild builds and writes the index of SciFact's documents from
// analysed terms.
func BenchmarkBuild(b *testing.B) {
	docs := analysed(benchTexts(b))
	var tokens int64
	for _, d := range docs {
		tokens += int64(len(d))
	}
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		var bl Builder
		for i, d := range docs {
			bl.Add(i, d)
		}
		buf.Reset()
		bl.Build().WriteTo(&buf)
	}
	b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	b.ReportMetric(float64(buf.Len()), "file-bytes")
}

// BenchmarkRead reads the index of SciFact's documents back.
func BenchmarkRead(b *testing.B) {
	docs := analysed(benchTexts(b))
	var buf bytes.Buffer
	build(b, docs).WriteTo(&buf)
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch searches SciFact's 1,109 queries over its documents, in
// batches of 1 and of all, top 100.
func BenchmarkSearch(b *testing.B) {
	texts := benchTexts(b)
	ix := build(b, analysed(texts))
	qs := benchQueries(b)
	for _, batch := range []int{1, len(qs)} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			s := ix.NewSearcher()
			b.ReportAllocs()
			for b.Loop() {
				for i := 0; i < len(qs); i += batch {
					if _, err := s.Search(qs[i:min(i+batch, len(qs))], 100, DefaultBM25, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(qs))*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

func benchQueries(b *testing.B) [][]string {
	dir := testfiles.Dataset(b, "scifact")
	qs := readQueries(b, dir)
	out := make([][]string, len(qs))
	for i, q := range qs {
		out[i] = English.Terms(q)
	}
	return out
}

// BenchmarkSearchWindow searches QMSum's 1,332 queries over its window of 64
// tokens (48,848 chunks), top 100, in one batch.
func BenchmarkSearchWindow(b *testing.B) {
	dir := testfiles.Dataset(b, "qmsum")
	wins := cutWindows(b, readDocs(b, dir), miniLMTokenizer(b))
	ix := build(b, analysed(wins[0]))
	texts := readQueries(b, dir)
	qs := make([][]string, len(texts))
	for i, q := range texts {
		qs[i] = English.Terms(q)
	}
	s := ix.NewSearcher()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Search(qs, 100, DefaultBM25, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(qs))*float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}
