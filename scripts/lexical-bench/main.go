// Command lexical-bench times a lexical-only build and search over windows
// whose chunk texts were exported by the lexical package's test TestExportChunks
// (go test ./lexical -run TestExportChunks -export-chunks DIR -export-sets
// qmsum,nfcorpus): for each dataset and window, it analyses the chunks
// (English), builds the index, writes it to a temporary file and reads it
// back, then analyses every query of the dataset and searches the top 100.
// scripts/bench_lexical.py does the same with bm25s; scripts/bench_lexical.sh
// runs both.
//
//	go run ./scripts/lexical-bench -chunks DIR -data ~/.cache/msrag/data -sets qmsum,nfcorpus
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/msrag/msrag/lexical"
)

func main() {
	chunks := flag.String("chunks", "", "directory of exported chunk texts (<dataset>/w<size>.jsonl)")
	data := flag.String("data", "", "directory of the BEIR datasets (their queries.jsonl.gz)")
	sets := flag.String("sets", "qmsum,nfcorpus", "datasets, comma-separated")
	windows := flag.String("windows", "64,128,254", "window sizes, comma-separated")
	flag.Parse()
	if *chunks == "" || *data == "" {
		fmt.Fprintln(os.Stderr, "lexical-bench: -chunks and -data are required")
		os.Exit(2)
	}
	for _, set := range strings.Split(*sets, ",") {
		queries, err := readQueries(filepath.Join(*data, set, "queries.jsonl.gz"))
		if err != nil {
			fail(err)
		}
		for _, w := range strings.Split(*windows, ",") {
			if err := run(filepath.Join(*chunks, set, "w"+w+".jsonl"), queries); err != nil {
				fail(err)
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "lexical-bench:", err)
	os.Exit(1)
}

// run builds the index of one window's chunks, writes and reads it, and
// searches the queries.
func run(path string, queries []string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tk := lexical.English.NewTokenizer()
	var b lexical.Builder
	var terms []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var text string
		if err := json.Unmarshal(sc.Bytes(), &text); err != nil {
			return fmt.Errorf("%s: row %d: %w", path, b.Len(), err)
		}
		terms = tk.Append(terms[:0], text)
		if err := b.Add(b.Len(), terms); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	ix, err := writeRead(b.Build())
	if err != nil {
		return err
	}
	qs := make([][]string, len(queries))
	for i, q := range queries {
		qs[i] = tk.Append(nil, q)
	}
	hits, err := ix.Search(qs, 100, lexical.DefaultBM25, nil)
	if err != nil {
		return err
	}
	var top float64
	for q := range qs {
		top += float64(hits.Scores[q*hits.K])
	}
	fmt.Printf("%s: %d rows, %d terms, %d queries, mean top score %.4f\n", path, ix.Docs(), ix.NumTerms(), len(qs), top/float64(len(qs)))
	return nil
}

// writeRead writes ix to a temporary file and reads it back.
func writeRead(ix *lexical.Index) (*lexical.Index, error) {
	f, err := os.CreateTemp("", "lexical-bench-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := ix.WriteTo(f)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return lexical.Read(bufio.NewReader(f), n)
}

func readQueries(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	dec := json.NewDecoder(zr)
	for {
		var q struct {
			Text string `json:"text"`
		}
		if err := dec.Decode(&q); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: query %d: %w", path, len(out)+1, err)
		}
		out = append(out, q.Text)
	}
}
