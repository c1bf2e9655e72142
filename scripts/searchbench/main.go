// Command searchbench is msrag's side of scripts/peer_search.py.
//
//	searchbench -dir DIR -prepare   build DIR/index (SciFact, windows 100,200,500,
//	                                384-dim hash test embedder, Flat inner product)
//	                                and write DIR/queries.npy (10,000 x 384 float32)
//	searchbench -dir DIR -reps N    open DIR/index, search+fuse all queries N times
//	                                (k_w = 100, k = 10), print one JSON line of
//	                                timings and write DIR/msrag_top10.tsv
//
// The queries are SciFact's 1,109 queries embedded with the same embedder and
// repeated to 10,000, every repeat perturbed by Gaussian noise of norm about 0.1
// and normalised again (fixed seed), as BenchmarkSearch in bench_test.go does.
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/benchdata"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/hashembed"
)

const (
	nQueries = 10000
	dims     = 384
	seed     = 0x5e4c
)

func main() {
	dir := flag.String("dir", "", "work directory")
	data := flag.String("data", filepath.Join(cache.Dir(), "data"), "data directory (BEIR layout; scripts/fetch-data.sh fills the default)")
	tokPath := flag.String("tokenizer", filepath.Join(cache.Dir(), "models", "all-minilm-l6-v2", "tokenizer.json"), "tokenizer.json of all-MiniLM-L6-v2")
	prepare := flag.Bool("prepare", false, "build the index and the query vectors")
	reps := flag.Int("reps", 3, "timed search+fuse passes over all queries")
	flag.Parse()
	if *dir == "" {
		log.Fatal("searchbench: -dir is required")
	}
	emb, err := hashembed.NewHash(*tokPath, dims, 512)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if *prepare {
		if err := prepareDir(ctx, emb, *dir, *data); err != nil {
			log.Fatal(err)
		}
		return
	}
	ix, err := msrag.OpenWith(msrag.OpenOptions{Embedder: emb, SkipVerify: true}, filepath.Join(*dir, "index"))
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	vecs, err := readNpy(filepath.Join(*dir, "queries.npy"))
	if err != nil {
		log.Fatal(err)
	}
	nq := len(vecs) / dims
	opts := msrag.SearchOptions{K: 10, ChannelK: 100}
	// One untimed pass, as the peer does.
	ch, err := ix.SearchVectors(ctx, vecs, opts.ChannelK)
	if err != nil {
		log.Fatal(err)
	}
	hits, err := ix.Fuse(ch, opts)
	if err != nil {
		log.Fatal(err)
	}
	var searchS, fuseS []float64
	for range *reps {
		t0 := time.Now()
		ch, err := ix.SearchVectors(ctx, vecs, opts.ChannelK)
		if err != nil {
			log.Fatal(err)
		}
		t1 := time.Now()
		if hits, err = ix.Fuse(ch, opts); err != nil {
			log.Fatal(err)
		}
		searchS = append(searchS, t1.Sub(t0).Seconds())
		fuseS = append(fuseS, time.Since(t1).Seconds())
	}
	if err := writeTop(filepath.Join(*dir, "msrag_top10.tsv"), hits); err != nil {
		log.Fatal(err)
	}
	out, _ := json.Marshal(map[string]any{"nq": nq, "search_s": searchS, "fuse_s": fuseS})
	fmt.Println(string(out))
}

// writeTop writes one line per query: the top document ids and their fused
// scores, tab-separated as id:score.
func writeTop(path string, hits [][]msrag.Hit) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, row := range hits {
		parts := make([]string, len(row))
		for i, h := range row {
			parts[i] = fmt.Sprintf("%s:%.9g", h.DocID, h.Score)
		}
		fmt.Fprintln(w, strings.Join(parts, "\t"))
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func prepareDir(ctx context.Context, emb *hashembed.Hash, dir, data string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !msrag.IsIndex(filepath.Join(dir, "index")) {
		src, err := corpus.Open(filepath.Join(data, "scifact", "corpus.jsonl.gz"), corpus.Options{})
		if err != nil {
			return err
		}
		ix, st, err := msrag.BuildWithStats(ctx, src, msrag.Config{Embedder: emb, Out: filepath.Join(dir, "index"), Windows: chunk.Sizes(100, 200, 500)})
		src.Close()
		if err != nil {
			return err
		}
		ix.Close()
		fmt.Fprintf(os.Stderr, "searchbench: built %d docs, vectors %v in %s\n", st.Docs, st.Vectors, st.Wall.Round(time.Millisecond))
	}
	texts, err := readQueries(filepath.Join(data, "scifact", "queries.jsonl.gz"))
	if err != nil {
		return err
	}
	base, err := emb.Embed(ctx, texts, embed.Query)
	if err != nil {
		return err
	}
	return writeNpy(filepath.Join(dir, "queries.npy"), benchdata.PerturbQueries(base, dims, nQueries, seed), nQueries, dims)
}

func readQueries(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	var texts []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, err
		}
		texts = append(texts, q.Text)
	}
	return texts, sc.Err()
}

// writeNpy writes a C-order little-endian float32 matrix in NumPy's .npy format 1.0.
func writeNpy(path string, x []float32, rows, cols int) error {
	hdr := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	pad := 64 - (10+len(hdr)+1)%64
	hdr += strings.Repeat(" ", pad%64) + "\n"
	b := make([]byte, 0, 10+len(hdr)+4*len(x))
	b = append(b, "\x93NUMPY\x01\x00"...)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(hdr)))
	b = append(b, hdr...)
	for _, v := range x {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return os.WriteFile(path, b, 0o644)
}

// readNpy reads what writeNpy wrote.
func readNpy(path string) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("%s: not a .npy file", path)
	}
	off := 10 + int(binary.LittleEndian.Uint16(b[8:10]))
	if !strings.Contains(string(b[10:off]), "'<f4'") {
		return nil, fmt.Errorf("%s: not little-endian float32", path)
	}
	x := make([]float32, (len(b)-off)/4)
	for i := range x {
		x[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:]))
	}
	return x, nil
}
