package scatter_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	_ "github.com/msrag/msrag/channels" // the built-in kinds the indices are built of
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/internal/testfiles"
)

// The indices these tests search are built as the root package's tests
// build theirs: the hash embedder over the committed BERT tokenizer, the
// first SciFact documents (or synthetic ones without the data folder).

func testTokenizer(tb testing.TB) string {
	tb.Helper()
	return testfiles.BERTUncased(tb, tb.TempDir())
}

func testEmbedder(tb testing.TB) *hashembed.Hash {
	tb.Helper()
	e, err := hashembed.NewHash(testTokenizer(tb), 32, 128)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func testWindowTokenizer(tb testing.TB) *msrag.WindowTokenizer {
	tb.Helper()
	wt, err := msrag.LoadWindowTokenizer("bert-uncased-test", testTokenizer(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return wt
}

var testWindows = chunk.Sizes(16, 32, 64)

type testDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// scifactDocs reads the first n SciFact documents from the cache
// (testfiles.DataDir), or makes synthetic ones where SciFact is absent.
func scifactDocs(tb testing.TB, n int) []testDoc {
	tb.Helper()
	var docs []testDoc
	f, err := os.Open(filepath.Join(testfiles.DataDir("scifact"), "corpus.jsonl.gz"))
	if err != nil {
		words := strings.Fields("cell protein gene expression tumour mice patients risk study trial dose effect blood brain signal pathway receptor")
		for i := range n {
			var b strings.Builder
			for j := range 40 + (i*37)%300 {
				b.WriteString(words[(i*7+j*j)%len(words)])
				b.WriteByte(' ')
			}
			docs = append(docs, testDoc{ID: fmt.Sprint("d", i), Title: fmt.Sprint("T", i), Text: b.String()})
		}
		return docs
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && len(docs) < n {
		var d testDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, d)
	}
	return docs
}

func writeJSONL(tb testing.TB, docs []testDoc) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "corpus.jsonl")
	var b strings.Builder
	for _, d := range docs {
		line, _ := json.Marshal(d)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// writeCorpus writes docs as the JSONL file name in dir.
func writeCorpus(tb testing.TB, dir, name string, docs []testDoc) string {
	tb.Helper()
	data, err := os.ReadFile(writeJSONL(tb, docs))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

func openCorpus(tb testing.TB, path string, opts corpus.Options) corpus.Reader {
	tb.Helper()
	r, err := corpus.Open(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// buildShards builds n shards of the corpus at path (blocks of blockLines
// lines) with cfg into base/shard-i and returns their directories.
func buildShards(tb testing.TB, path, base string, n, blockLines int, cfg msrag.Config) []string {
	tb.Helper()
	var dirs []string
	for i := range n {
		c := cfg
		c.Out, c.Shard = filepath.Join(base, fmt.Sprint("shard-", i)), fmt.Sprintf("%d/%d", i, n)
		ix, err := msrag.Build(context.Background(), openCorpus(tb, path, corpus.Options{BlockLines: blockLines, Shard: corpus.Shard{I: i, N: n}}), c)
		if err != nil {
			tb.Fatal(err)
		}
		ix.Close()
		dirs = append(dirs, c.Out)
	}
	return dirs
}

// buildPart builds shard i/n of the corpus at path (JSONL in blocks of 10
// lines, or a directory), lexical only, into out.
func buildPart(tb testing.TB, path, out string, i, n int) string {
	tb.Helper()
	ix, err := msrag.Build(context.Background(), openCorpus(tb, path, corpus.Options{BlockLines: 10, Shard: corpus.Shard{I: i, N: n}}),
		msrag.Config{Tokenizer: testWindowTokenizer(tb), Windows: chunk.Sizes(16, 32), Out: out, Shard: fmt.Sprintf("%d/%d", i, n)})
	if err != nil {
		tb.Fatal(err)
	}
	ix.Close()
	return out
}

// lexicalQueries are queries made of the docs' titles.
func lexicalQueries(docs []testDoc, n int) []string {
	var qs []string
	for _, d := range docs[:n] {
		qs = append(qs, d.Title+" "+strings.Join(strings.Fields(d.Text)[:3], " "))
	}
	return qs
}

func mustFusion(tb testing.TB, s string) fusion.Fusion {
	tb.Helper()
	f, err := fusion.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

func ids(h []msrag.Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = fmt.Sprintf("%s:%.6g", x.DocID, x.Score)
	}
	return out
}

// sameRanking compares document ids, scores and evidence (not document
// indices, which differ between shards and one index).
func sameRanking(a, b []msrag.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].DocID != b[i].DocID || a[i].Score != b[i].Score || !reflect.DeepEqual(a[i].Evidence, b[i].Evidence) {
			return false
		}
	}
	return true
}

// defaultLexical is the lexical kind's default parameters (bm25.DefaultConfig).
func defaultLexical() *bm25.Config {
	c := bm25.DefaultConfig()
	return &c
}

// withLexical is the channels of a build with a model: dense, lexical with
// lex (none when nil), then more.
func withLexical(lex *bm25.Config, more ...channel.Params) []channel.Params {
	out := []channel.Params{dense.Params{}}
	if lex != nil {
		out = append(out, *lex)
	}
	return append(out, more...)
}
