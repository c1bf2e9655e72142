package lexical

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/cache"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/tokenizer"
)

// The goldens of scripts/gen_lexical_golden.py come from chunk texts that
// this file cuts as msrag's build does: go test ./lexical -run
// TestExportChunks -export-chunks DIR writes DIR/<dataset>/w<size>.jsonl,
// one JSON string (a chunk's text) a line, in row order (-export-sets picks
// the datasets; scripts/bench_lexical.sh uses qmsum and nfcorpus).
var (
	exportChunks = flag.String("export-chunks", "", "write the windows' chunk texts under this directory")
	exportSets   = flag.String("export-sets", "scifact,qmsum", "the datasets -export-chunks writes")
)

// goldenWindows are the windows of the goldens: all-MiniLM-L6-v2's 256 tokens
// hold 254 of content.
var goldenWindows = []int{64, 128, 254}

// readDocs reads every document of a BEIR dataset directory.
func readDocs(tb testing.TB, dir string) []corpus.Doc {
	tb.Helper()
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := corpus.Open(ds.Corpus, corpus.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var docs []corpus.Doc
	for {
		batch, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, batch...)
	}
}

// miniLMTokenizer loads all-MiniLM-L6-v2's tokenizer from the cache,
// skipping the test when it is absent.
func miniLMTokenizer(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	path := filepath.Join(cache.Dir(), "models", "all-minilm-l6-v2", "tokenizer.json")
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("no tokenizer: %v", err)
	}
	tok, err := tokenizer.Load(path)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// cutWindows returns, per golden window, the texts of its chunks in row
// order: documents in corpus order, each document's windows in order, as
// the build adds them (title + " " + text, tokens without special tokens,
// the aligned tail).
func cutWindows(tb testing.TB, docs []corpus.Doc, tok *tokenizer.Tokenizer) [][]string {
	tb.Helper()
	ch, err := chunk.New(chunk.Config{Windows: chunk.Sizes(goldenWindows...), MaxTokens: 256, SpecialTokens: 2})
	if err != nil {
		tb.Fatal(err)
	}
	out := make([][]string, len(goldenWindows))
	var res chunk.Result
	var spans []chunk.Span
	for _, d := range docs {
		text := d.Full()
		enc := tok.EncodeWith(text, tokenizer.Options{NoSpecial: true, MaxLength: -1})
		spans = chunk.Spans(spans, enc.Offsets)
		if err := ch.Split(text, spans, &res); err != nil {
			tb.Fatalf("document %s: %v", d.ID, err)
		}
		for wi, list := range res.Windows {
			for _, ci := range list {
				out[wi] = append(out[wi], res.Text(text, int(ci)))
			}
		}
	}
	return out
}

// readQueries returns the texts of the queries of a BEIR dataset directory.
func readQueries(tb testing.TB, dir string) []string {
	tb.Helper()
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		tb.Fatal(err)
	}
	qs, err := corpus.ReadQueries(ds.Queries, corpus.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Text
	}
	return out
}

var goldenSets = []string{"scifact", "qmsum"}

func TestExportChunks(t *testing.T) {
	if *exportChunks == "" {
		t.Skip("no -export-chunks")
	}
	tok := miniLMTokenizer(t)
	for _, name := range strings.Split(*exportSets, ",") {
		wins := cutWindows(t, readDocs(t, testfiles.Dataset(t, name)), tok)
		dir := filepath.Join(*exportChunks, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for wi, texts := range wins {
			f, err := os.Create(filepath.Join(dir, "w"+strconv.Itoa(goldenWindows[wi])+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			enc := json.NewEncoder(f)
			enc.SetEscapeHTML(false)
			for _, s := range texts {
				if err := enc.Encode(s); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s window %d: %d chunks", name, goldenWindows[wi], len(texts))
		}
	}
}
