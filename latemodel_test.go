package msrag

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embed"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/onnx"
)

// lateGolden is testdata/late/MODEL.json, written with MODEL.f16 by
// scripts/gen_late_golden.py (tokenizers, onnxruntime and NumPy).
type lateGolden struct {
	Model         string `json:"model"`
	Dims          int    `json:"dims"`
	Windows       []int  `json:"windows"`
	SegmentTokens int    `json:"segment_tokens"`
	Overlap       int    `json:"overlap"`
	VectorsFile   string `json:"vectors_file"`
	Chunks        []struct {
		Dataset, Doc, Window string
		Start, End           int
		Held                 bool
		DocTokens            int `json:"doc_tokens"`
	} `json:"chunks"`
	vecs []float32
}

func readLateGolden(t *testing.T, model string) *lateGolden {
	t.Helper()
	var g lateGolden
	data, err := os.ReadFile(filepath.Join("testdata", "late", model+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "late", g.VectorsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2*g.Dims*len(g.Chunks) {
		t.Fatalf("%s: %d bytes for %d vectors of %d dims", g.VectorsFile, len(raw), len(g.Chunks), g.Dims)
	}
	g.vecs = make([]float32, len(raw)/2)
	for i := range g.vecs {
		g.vecs[i] = halfToFloat(binary.LittleEndian.Uint16(raw[2*i:]))
	}
	for i := range g.Chunks {
		embed.Normalize(g.vecs[i*g.Dims : (i+1)*g.Dims])
	}
	return &g
}

// halfToFloat decodes an IEEE 754 half-precision number.
func halfToFloat(h uint16) float32 {
	sign := float32(1)
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10)&0x1f, float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * float32(math.Ldexp(frac, -24))
	case 0x1f:
		return sign * float32(math.Inf(1))
	}
	return sign * float32(math.Ldexp(1+frac/1024, exp-15))
}

func TestHalfToFloat(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x3555: 0.333251953125, 0x0001: 5.960464477539063e-08, 0: 0} {
		if got := halfToFloat(h); got != want {
			t.Errorf("halfToFloat(%#04x) = %g, want %g", h, got, want)
		}
	}
}

// fetchedEmbedder opens a fetched model for a test; it skips the test when
// the model is absent, unless CI is set (there setup fetches the models).
func fetchedEmbedder(t *testing.T, name string) Embedder {
	t.Helper()
	dir, err := onnx.ResolveModel(name)
	if err == nil {
		_, err = os.Stat(onnx.LibraryPath())
	}
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("model %s or the ONNX Runtime library is absent (make setup): %v", name, err)
		}
		t.Fatal(err)
	}
	e, err := onnx.Open(dir, onnx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// sharedDocs reads the documents with the given ids of a dataset in the
// cache (testfiles.Dataset), in the order of the ids.
func sharedDocs(t *testing.T, dataset string, ids []string) []testDoc {
	t.Helper()
	f, err := os.Open(filepath.Join(testfiles.Dataset(t, dataset), "corpus.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]testDoc{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d testDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids, d.ID) {
			byID[d.ID] = d
		}
	}
	var out []testDoc
	for _, id := range ids {
		d, ok := byID[id]
		if !ok {
			t.Fatalf("%s has no document %s", dataset, id)
		}
		out = append(out, d)
	}
	return out
}

// rowScores searches window w for vecs and returns, for each, the score of
// row rows[i] among the first ten results (-1 when it is not there).
func rowScores(t *testing.T, w *window, rows []int64, vecs []float32) []float64 {
	t.Helper()
	const k = 10
	dist, labels, err := w.index.Search(vecs, k)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(rows))
	for i, r := range rows {
		out[i] = -1
		for j := range k {
			if labels[i*k+j] == r {
				out[i] = float64(dist[i*k+j])
			}
		}
	}
	return out
}

// findRow is the row of window w holding document doc's tokens [start, end).
func findRow(ix *Index, w *window, doc string, start, end int) int64 {
	sh := ix.shards[0]
	for r := range w.chunks.Len() {
		if sh.ids[w.chunks.Doc[r]] == doc && int(w.chunks.TokStart[r]) == start && int(w.chunks.TokEnd[r]) == end {
			return int64(r)
		}
	}
	return -1
}

// A late build of SciFact documents and two QMSum meetings (several
// segments, windows across their borders) gives every window the vector an
// independent implementation of the rule gives it, and gives a window
// covering a whole short document its independent embedding.
func TestLateMatchesReference(t *testing.T) {
	for _, name := range []string{"e5-small-v2", "all-minilm-l6-v2"} {
		t.Run(name, func(t *testing.T) {
			g := readLateGolden(t, name)
			emb := fetchedEmbedder(t, name)
			var docs []testDoc
			for _, ds := range []string{"scifact", "qmsum"} {
				var ids []string
				for _, c := range g.Chunks {
					if c.Dataset == ds && !slices.Contains(ids, c.Doc) {
						ids = append(ids, c.Doc)
					}
				}
				docs = append(docs, sharedDocs(t, ds, ids)...)
			}
			windows := append(chunk.Sizes(g.Windows...), chunk.Full)
			ix, err := Build(context.Background(), openCorpus(t, writeJSONL(t, docs), corpus.Options{}),
				Config{Embedder: emb, Windows: windows, Embedding: Late, BatchTokens: 4096})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			if l := ix.Manifest().Late; l.SegmentTokens != g.SegmentTokens || l.Overlap != g.Overlap {
				t.Fatalf("segments of %d sharing %d, the reference's %d sharing %d", l.SegmentTokens, l.Overlap, g.SegmentTokens, g.Overlap)
			}
			checkReference(t, ix, g)
			checkWholeDocuments(t, ix, emb, docs, g.SegmentTokens)
		})
	}
}

func checkReference(t *testing.T, ix *Index, g *lateGolden) {
	t.Helper()
	split := 0
	for _, w := range ix.shards[0].windows() {
		var rows []int64
		var vecs []float32
		var which []int
		for i, c := range g.Chunks {
			if c.Window != w.spec.Name() {
				continue
			}
			r := findRow(ix, w, c.Doc, c.Start, c.End)
			if r < 0 {
				t.Fatalf("window %s has no chunk of %s tokens %d-%d", c.Window, c.Doc, c.Start, c.End)
			}
			rows, which = append(rows, r), append(which, i)
			vecs = append(vecs, g.vecs[i*g.Dims:(i+1)*g.Dims]...)
		}
		for j, s := range rowScores(t, w, rows, vecs) {
			c := g.Chunks[which[j]]
			if !c.Held {
				split++
			}
			if s < 0.99999 {
				t.Errorf("window %s, %s tokens %d-%d (held by one segment: %v): cosine %.7f with the reference", c.Window, c.Doc, c.Start, c.End, c.Held, s)
			}
		}
	}
	if split == 0 || split == len(g.Chunks) {
		t.Errorf("%d of %d reference windows cross segment borders: both kinds must be checked", split, len(g.Chunks))
	}
}

// checkWholeDocuments compares the windows covering a whole document that
// fits one segment with the independent embedding of its tokens.
func checkWholeDocuments(t *testing.T, ix *Index, emb Embedder, docs []testDoc, segment int) {
	t.Helper()
	tokens := docIDs(emb, docs)
	checked := 0
	for _, w := range ix.shards[0].windows() {
		var rows []int64
		var chunks []embed.Chunk
		for _, d := range docs {
			ids := tokens[d.ID]
			n := len(ids)
			if n > segment {
				continue
			}
			if r := findRow(ix, w, d.ID, 0, n); r >= 0 {
				rows, chunks = append(rows, r), append(chunks, embed.Chunk{IDs: ids})
			}
		}
		if len(rows) == 0 {
			continue
		}
		vecs, err := emb.EmbedChunks(context.Background(), chunks, embed.Passage)
		if err != nil {
			t.Fatal(err)
		}
		for j, s := range rowScores(t, w, rows, vecs) {
			checked++
			if s < 0.99999 {
				t.Errorf("window %s row %d (a whole document): cosine %.7f with its independent embedding", w.spec.Name(), rows[j], s)
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d windows covered a whole document", checked)
	}
}
