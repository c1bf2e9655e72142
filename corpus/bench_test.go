package corpus_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/testfiles"
)

// BenchmarkReadSciFact reads the SciFact corpus (5,183 documents, 7.9 MB of
// title and text) as the shipped corpus.jsonl.gz, as plain JSONL and as a
// Parquet copy with row groups of 1,024 rows. MB/s counts title and text
// bytes returned.
func BenchmarkReadSciFact(b *testing.B) {
	src := filepath.Join(testfiles.Dataset(b, "scifact"), "corpus.jsonl.gz")
	docs, _, err := readAll(b, src, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	plain := filepath.Join(dir, "corpus.jsonl")
	pq := filepath.Join(dir, "corpus.parquet")
	writeJSONL(b, plain, rows(docs...))
	writeParquet(b, pq, beir, 1024, rows(docs...))
	for _, in := range []struct{ name, path string }{{"jsonl.gz", src}, {"jsonl", plain}, {"parquet", pq}} {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			var st corpus.Stats
			for b.Loop() {
				st = readStats(b, in.path)
			}
			b.SetBytes(st.Bytes)
			b.ReportMetric(float64(st.Docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

func readStats(b *testing.B, path string) corpus.Stats {
	r, err := corpus.Open(path, corpus.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for {
		_, err := r.Next(context.Background())
		if err == io.EOF {
			return r.Stats()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
