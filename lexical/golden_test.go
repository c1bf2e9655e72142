package lexical

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/internal/testfiles"
)

// readGolden decodes a gzip-compressed JSON golden file of testdata.
func readGolden(tb testing.TB, name string, v any) {
	tb.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
}

// TestAnalyzerGolden compares the analyzers with bm25s's tokenize (Python's
// re and str.lower, PyStemmer 2.0.1) term for term.
func TestAnalyzerGolden(t *testing.T) {
	var g struct {
		Texts   []string
		English [][]string
		None    [][]string
	}
	readGolden(t, "analyzer.json.gz", &g)
	if len(g.Texts) < 1000 || len(g.English) != len(g.Texts) || len(g.None) != len(g.Texts) {
		t.Fatalf("golden holds %d texts, %d and %d term lists", len(g.Texts), len(g.English), len(g.None))
	}
	for _, c := range []struct {
		an   Analyzer
		want [][]string
	}{{English, g.English}, {None, g.None}} {
		tk := c.an.NewTokenizer()
		bad := 0
		for i, text := range g.Texts {
			got := tk.Append(nil, text)
			if len(got) == 0 && len(c.want[i]) == 0 {
				continue
			}
			if !slices.Equal(got, c.want[i]) {
				if bad++; bad <= 5 {
					t.Errorf("%s: text %d %q:\n got %q\nwant %q", c.an, i, trim(text), got, c.want[i])
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d texts differ", c.an, bad, len(g.Texts))
		}
	}
}

func trim(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "..."
	}
	return s
}

type windowGolden struct {
	Chunks  int
	Sha256  string
	Tokens  int64
	Queries []struct {
		ID     string
		Text   string
		Terms  []string
		Rows   []int32
		Scores []float32
	}
}

// TestWindowsGolden indexes the windows of SciFact and QMSum as msrag cuts
// them and compares every query's top 100 with bm25s's: the scores to 1e-5
// relative, the rows in the same order except among equal scores.
func TestWindowsGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var g map[string]map[string]windowGolden
	readGolden(t, "windows.json.gz", &g)
	tok := miniLMTokenizer(t)
	for _, name := range goldenSets {
		wins := cutWindows(t, readDocs(t, testfiles.Dataset(t, name)), tok)
		for wi, texts := range wins {
			wg, ok := g[name][strconv.Itoa(goldenWindows[wi])]
			if !ok || len(wg.Queries) == 0 {
				t.Fatalf("%s window %d: not in the golden file", name, goldenWindows[wi])
			}
			t.Run(name+"/w"+strconv.Itoa(goldenWindows[wi]), func(t *testing.T) {
				checkWindow(t, texts, wg)
			})
		}
	}
}

func checkWindow(t *testing.T, texts []string, wg windowGolden) {
	h := sha256.New()
	for _, s := range texts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	if len(texts) != wg.Chunks || hex.EncodeToString(h.Sum(nil)) != wg.Sha256 {
		t.Fatalf("%d chunks with sha256 %x, the golden was made from %d with %s", len(texts), h.Sum(nil), wg.Chunks, wg.Sha256)
	}
	ix := buildIndex(t, English, texts)
	if ix.Tokens() != wg.Tokens {
		t.Errorf("%d terms in the chunks, bm25s counted %d", ix.Tokens(), wg.Tokens)
	}
	queries := make([][]string, len(wg.Queries))
	for i, q := range wg.Queries {
		queries[i] = English.Terms(q.Text)
		if !slices.Equal(queries[i], q.Terms) && !(len(queries[i]) == 0 && len(q.Terms) == 0) {
			t.Errorf("query %s: terms %q, bm25s %q", q.ID, queries[i], q.Terms)
		}
	}
	hits, err := ix.Search(queries, 100, DefaultBM25, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range wg.Queries {
		rows, scores := hits.Rows[i*100:(i+1)*100], hits.Scores[i*100:(i+1)*100]
		n := slices.Index(rows, -1)
		if n < 0 {
			n = 100
		}
		if n != len(q.Rows) {
			t.Errorf("query %s: %d hits, bm25s %d", q.ID, n, len(q.Rows))
			continue
		}
		for j := range n {
			if !near(scores[j], q.Scores[j]) {
				t.Errorf("query %s hit %d: score %v, bm25s %v", q.ID, j, scores[j], q.Scores[j])
				break
			}
			if rows[j] != q.Rows[j] && !tiedIn(q.Rows, q.Scores, rows[j], scores[j]) {
				t.Errorf("query %s hit %d: row %d (%v), bm25s row %d (%v)", q.ID, j, rows[j], scores[j], q.Rows[j], q.Scores[j])
				break
			}
		}
	}
}

// near reports whether two scores agree to 1e-5 relative.
func near(a, b float32) bool {
	return math.Abs(float64(a)-float64(b)) <= 1e-5*math.Max(math.Abs(float64(a)), math.Abs(float64(b)))
}

// tiedIn reports whether row is in the golden list with a score near s: a
// row swapped with another of (nearly) equal score.
func tiedIn(rows []int32, scores []float32, row int32, s float32) bool {
	for j, r := range rows {
		if r == row {
			return near(scores[j], s)
		}
	}
	return false
}

// buildIndex analyses texts as rows 0, 1, ... and builds their index.
func buildIndex(tb testing.TB, an Analyzer, texts []string) *Index {
	tb.Helper()
	var b Builder
	tk := an.NewTokenizer()
	var terms []string
	for i, s := range texts {
		terms = tk.Append(terms[:0], s)
		if err := b.Add(i, terms); err != nil {
			tb.Fatal(err)
		}
	}
	return b.Build()
}

// TestDocLevelGolden scores whole documents of SciFact and NFCorpus (test
// split) and compares nDCG@10, from msrag's eval package, with bm25s +
// pytrec_eval's.
func TestDocLevelGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	var g map[string]struct {
		NDCG    float64 `json:"ndcg@10"`
		Queries int
	}
	b, err := os.ReadFile("testdata/doclevel.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"scifact", "nfcorpus"} {
		t.Run(name, func(t *testing.T) {
			got, n := docLevelNDCG(t, testfiles.Dataset(t, name))
			t.Logf("%s: nDCG@10 %.4f over %d queries; bm25s + pytrec_eval %.4f over %d", name, got, n, g[name].NDCG, g[name].Queries)
			if math.Abs(got-g[name].NDCG) > 0.01 || n != g[name].Queries {
				t.Errorf("nDCG@10 %.4f over %d queries, bm25s + pytrec_eval %.4f over %d", got, n, g[name].NDCG, g[name].Queries)
			}
		})
	}
}

// docLevelNDCG indexes every document of dir whole and returns the mean
// nDCG@10 of its test queries that match a document, and their number.
func docLevelNDCG(t *testing.T, dir string) (float64, int) {
	docs := readDocs(t, dir)
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Full()
	}
	ix := buildIndex(t, English, texts)
	ds, err := corpus.OpenDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := corpus.ReadQueries(ds.Queries, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := corpus.ReadQrels(ds.Qrels["test"][0], corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	judged := corpus.Judgements(rows)
	var ids []string
	var queries [][]string
	for _, q := range qs {
		if _, ok := judged[q.ID]; ok {
			ids = append(ids, q.ID)
			queries = append(queries, English.Terms(q.Text))
		}
	}
	hits, err := ix.Search(queries, 100, DefaultBM25, nil)
	if err != nil {
		t.Fatal(err)
	}
	run := eval.Run{}
	for i, id := range ids {
		for j := range 100 {
			if r := hits.Rows[i*100+j]; r >= 0 {
				run[id] = append(run[id], eval.Hit{Doc: docs[r].ID, Score: float64(hits.Scores[i*100+j])})
			}
		}
	}
	qrels := eval.Qrels{}
	for id := range run {
		qrels[id] = judged[id]
	}
	res, err := eval.Evaluate(qrels, run, "ndcg_cut_10")
	if err != nil {
		t.Fatal(err)
	}
	return res.Mean["ndcg_cut_10"], len(run)
}

// TestStemsGolden stems every distinct word of SciFact, NFCorpus and QMSum
// and compares with PyStemmer 2.0.1: kljensen/snowball v0.10.0 implements
// the same Snowball 2.0 English.
func TestStemsGolden(t *testing.T) {
	var g struct{ Words, Stems []string }
	readGolden(t, "stems.json.gz", &g)
	if len(g.Words) < 50000 || len(g.Stems) != len(g.Words) {
		t.Fatalf("golden holds %d words and %d stems", len(g.Words), len(g.Stems))
	}
	bad := 0
	for i, w := range g.Words {
		if s := stem(w); s != g.Stems[i] {
			if bad++; bad <= 10 {
				t.Errorf("stem(%q) = %q, PyStemmer %q", w, s, g.Stems[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d stems differ", bad, len(g.Words))
	}
}
