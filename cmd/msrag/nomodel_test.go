package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/internal/store"
	"github.com/msrag/msrag/internal/testfiles"
	"github.com/msrag/msrag/lexical"
)

// noModelCorpus writes a corpus of n documents of varied words (the hash
// test dataset's) and returns its dataset directory.
func noModelCorpus(t *testing.T, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if err := hashembed.WriteDataset(dir, n); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestIndexNoModelCLI builds an index with --model none and a tokenizer
// file, with no model cache and no ONNX Runtime to be found, searches it,
// and checks each query's best chunk of bm25-w16 against lexical.Search
// over an index built here from the chunk table's byte spans of the
// documents' texts.
func TestIndexNoModelCLI(t *testing.T) {
	tok := testfiles.BERTUncased(t, t.TempDir())
	t.Setenv("MSRAG_CACHE", t.TempDir())
	t.Setenv("MSRAG_ORT_LIB", filepath.Join(t.TempDir(), "no-such-libonnxruntime.so"))
	ds := noModelCorpus(t, 60)
	idx := filepath.Join(t.TempDir(), "idx")
	code, _, errOut := runCLI(t, "", "index", "--corpus", ds, "--out", idx, "--model", "none", "--tokenizer", tok, "--windows", "16,32", "--quiet")
	if code != exitOK || !strings.Contains(errOut, "no model, windows cut by tokenizer") {
		t.Fatalf("index --model none: code %d: %s", code, errOut)
	}
	if m, _ := filepath.Glob(filepath.Join(idx, "*.faiss")); len(m) > 0 {
		t.Fatalf("FAISS files written: %v", m)
	}
	queries := filepath.Join(ds, "queries.jsonl")
	code, out, errOut := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--k", "3", "--fusion", "bm25-w16", "--format", "jsonl")
	if code != exitOK {
		t.Fatalf("search bm25-w16: code %d: %s", code, errOut)
	}
	texts, qs := docTexts(t, ds), queryTexts(t, queries)
	want := bestChunks(t, idx, "w16", texts, qs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(qs) {
		t.Fatalf("%d lines for %d queries", len(lines), len(qs))
	}
	for i, l := range lines {
		var line struct {
			QueryID string `json:"query_id"`
			Hits    []struct {
				DocID    string `json:"doc_id"`
				Evidence []struct {
					Channel    string  `json:"channel"`
					ChunkRank  int     `json:"chunk_rank"`
					ChunkScore float32 `json:"chunk_score"`
					Start, End int64
				} `json:"evidence"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		e := line.Hits[0].Evidence[0]
		got := fmt.Sprintf("%s %d-%d %.6g", line.Hits[0].DocID, e.Start, e.End, e.ChunkScore)
		if w := want[line.QueryID]; e.Channel != "bm25-w16" || e.ChunkRank != 1 || got != w {
			t.Errorf("query %d (%s): best chunk %s of %s, lexical.Search's %s", i, line.QueryID, got, e.Channel, w)
		}
	}
	// The default rule fuses the lexical channels; naming them gives the same run.
	_, def, _ := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--k", "5")
	_, named, _ := runCLI(t, "", "search", "--index", idx, "--queries", queries, "--k", "5", "--fusion", "rrf:windows=lexical")
	if def == "" || def != named || strings.Count(def, "\n") != 5*len(qs) {
		t.Errorf("default search:\n%s\nrrf:windows=lexical:\n%s", def, named)
	}
}

// docTexts reads the dataset's documents: id -> title + " " + text (the
// text alone without a title), the text msrag's byte spans index.
func docTexts(t *testing.T, ds string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range jsonLines(t, filepath.Join(ds, "corpus.jsonl")) {
		out[l["_id"]] = strings.TrimPrefix(l["title"]+" "+l["text"], " ")
	}
	return out
}

func queryTexts(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range jsonLines(t, path) {
		out[l["_id"]] = l["text"]
	}
	return out
}

func jsonLines(t *testing.T, path string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var m map[string]string
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// bestChunks builds a lexical index of window w's chunk rows from the
// documents' texts at the chunk table's byte spans and returns, per query
// id, its best chunk as "doc start-end score" (the first of equal scores
// by document id, then start, as msrag orders them).
func bestChunks(t *testing.T, idx, w string, texts, queries map[string]string) map[string]string {
	t.Helper()
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(idx, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	docIDs, _, err := store.ReadDocTable(read("docs.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := store.ReadChunkTable(read(w + ".chunks.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	var b lexical.Builder
	for r := range ct.Len() {
		text := texts[docIDs[ct.Doc[r]]]
		if err := b.Add(r, lexical.English.Terms(text[ct.ByteStart[r]:ct.ByteEnd[r]])); err != nil {
			t.Fatal(err)
		}
	}
	ix := b.Build()
	out := map[string]string{}
	for id, q := range queries {
		h, err := ix.Search([][]string{lexical.English.Terms(q)}, ix.Docs(), lexical.DefaultBM25, nil)
		if err != nil {
			t.Fatal(err)
		}
		best := int32(-1)
		for j, r := range h.Rows {
			if r < 0 || h.Scores[j] < h.Scores[0] {
				break
			}
			if d, bd := docIDs[ct.Doc[r]], ""; best >= 0 {
				bd = docIDs[ct.Doc[best]]
				if d > bd || d == bd && ct.ByteStart[r] > ct.ByteStart[best] {
					continue
				}
			}
			best = r
		}
		out[id] = fmt.Sprintf("%s %d-%d %s", docIDs[ct.Doc[best]], ct.ByteStart[best], ct.ByteEnd[best], strconv.FormatFloat(float64(h.Scores[0]), 'g', 6, 32))
	}
	return out
}

// TestNoModelUsageErrors checks that the mistakes of --model none are exit
// 2 one-liners, found before any document is read.
func TestNoModelUsageErrors(t *testing.T) {
	tok := testfiles.BERTUncased(t, t.TempDir())
	ds := noModelCorpus(t, 8)
	out := filepath.Join(t.TempDir(), "x")
	base := []string{"index", "--corpus", ds, "--out", out, "--model", "none"}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"no tokenizer":    {base, "--model none needs --tokenizer"},
		"lexical off":     {append(base, "--tokenizer", tok, "--no-lexical"), "leaves nothing to build"},
		"full window":     {append(base, "--tokenizer", tok, "--full"), "--full needs a model"},
		"factory":         {append(base, "--tokenizer", tok, "--factory", "HNSW32"), "--factory needs a model"},
		"late":            {append(base, "--tokenizer", tok, "--embedding", "late"), "--embedding late needs a model"},
		"no such file":    {append(base, "--tokenizer", filepath.Join(ds, "missing.json")), "--tokenizer"},
		"not a tokenizer": {append(base, "--tokenizer", filepath.Join(ds, "corpus.jsonl")), "tokenizer"},
		"eval full":       {[]string{"eval", "--dataset", ds, "--out", out, "--model", "none", "--tokenizer", tok, "--configs", "rrf,full"}, "no dense windows"},
		"eval cv":         {[]string{"eval", "--dataset", ds, "--out", out, "--model", "none", "--tokenizer", tok, "--cv-folds", "3"}, "--cv-folds needs a model"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", c.args...)
			if code != exitUsage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("%v: code %d, want %d and one line with %q; stderr %q", c.args, code, exitUsage, c.want, errOut)
			}
			if _, err := os.Stat(out); err == nil {
				t.Fatalf("%s written", out)
			}
		})
	}
	idx := filepath.Join(t.TempDir(), "idx")
	if code, _, errOut := runCLI(t, "", append(base[:4:4], idx, "--model", "none", "--tokenizer", tok, "--windows", "8,16", "--quiet")...); code != exitOK {
		t.Fatalf("index: %d %s", code, errOut)
	}
	for _, f := range []string{"w8", "rrf:windows=dense", "rrf:windows=all", "full"} {
		code, _, errOut := runCLI(t, "", "search", "--index", idx, "--queries", filepath.Join(ds, "queries.jsonl"), "--fusion", f)
		want := "index " + idx + " has no dense windows: it was built with --model none"
		if code != exitUsage || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("--fusion %s: code %d, stderr %q", f, code, errOut)
		}
	}
}

// TestEvalNoModelCLI evaluates a dataset with --model none: the lexical
// channels alone and fused, no full window; the index msrag index built
// with the same tokenizer is reused, one with dense windows is not.
func TestEvalNoModelCLI(t *testing.T) {
	tok := testfiles.BERTUncased(t, t.TempDir())
	t.Setenv("MSRAG_CACHE", t.TempDir())
	ds := noModelCorpus(t, 40)
	root := t.TempDir()
	idx := filepath.Join(root, "idx")
	if code, _, errOut := runCLI(t, "", "index", "--corpus", filepath.Join(ds, "corpus.jsonl"), "--out", idx, "--model", "none", "--tokenizer", tok, "--windows", "16,32", "--quiet"); code != exitOK {
		t.Fatalf("index: code %d: %s", code, errOut)
	}
	out := filepath.Join(root, "out")
	code, _, stderr := runCLI(t, "", "eval", "--dataset", ds, "--model", "none", "--tokenizer", tok, "--windows", "16,32", "--out", out, "--index", idx)
	if code != exitOK || !strings.Contains(stderr, "reusing index "+idx+" (built by msrag index") {
		t.Fatalf("eval --model none: code %d, want the index reused:\n%s", code, stderr)
	}
	var names []string
	for _, c := range readEval(t, out).Configs {
		names = append(names, c.Name)
	}
	if want := []string{"bm25-w16", "bm25-w32", "bm25-doc", "rrf", "maxp", "oracle"}; !slices.Equal(names, want) {
		t.Errorf("configurations %v, want %v", names, want)
	}
	other := testfiles.BERTUncased(t, t.TempDir())
	data, _ := os.ReadFile(other)
	os.WriteFile(other, bytes.Replace(data, []byte(`"[UNK]"`), []byte(`"[UNK]" `), 1), 0o644) // same tokenizer, other bytes
	code, _, stderr = runCLI(t, "", "eval", "--dataset", ds, "--model", "none", "--tokenizer", other, "--windows", "16,32", "--out", out, "--index", idx)
	if code == exitOK || !strings.Contains(stderr, "its windows were cut by a tokenizer of sha256") {
		t.Errorf("eval with another tokenizer file: code %d, want the index refused:\n%s", code, stderr)
	}
}

// TestNoModelShardsCLI checks that shards built with --model none search
// together exactly as the index of the whole corpus: the same TREC run.
func TestNoModelShardsCLI(t *testing.T) {
	tok := testfiles.BERTUncased(t, t.TempDir())
	ds := noModelCorpus(t, 90)
	root := t.TempDir()
	index := func(out string, extra ...string) {
		args := append([]string{"index", "--corpus", filepath.Join(ds, "corpus.jsonl"), "--out", out, "--model", "none", "--tokenizer", tok,
			"--windows", "8,16,32", "--block-lines", "7", "--quiet"}, extra...)
		if code, _, errOut := runCLI(t, "", args...); code != exitOK {
			t.Fatalf("index %v: code %d: %s", extra, code, errOut)
		}
	}
	index(filepath.Join(root, "whole"))
	var shards []string
	for i := range 3 {
		shards = append(shards, filepath.Join(root, "shards", fmt.Sprint(i)))
		index(shards[i], "--shard", fmt.Sprintf("%d/3", i))
	}
	queries := filepath.Join(ds, "queries.jsonl")
	for _, fusion := range []string{"rrf", "bm25-w8", "bm25-doc", "combsum:norm=zscore"} {
		code, one, errOut := runCLI(t, "", "search", "--index", filepath.Join(root, "whole"), "--queries", queries, "--k", "20", "--window-k", "30", "--fusion", fusion)
		if code != exitOK {
			t.Fatalf("search: %s", errOut)
		}
		code, sharded, errOut := runCLI(t, "", "search", "--index", strings.Join(shards, ","), "--queries", queries, "--k", "20", "--window-k", "30", "--fusion", fusion)
		if code != exitOK {
			t.Fatalf("search of the shards: %s", errOut)
		}
		if one == "" || one != sharded {
			t.Errorf("%s: the shards' run differs from the whole index's", fusion)
		}
	}
}
