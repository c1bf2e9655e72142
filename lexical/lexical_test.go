package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomDocs returns n documents of random terms from a Zipf-like
// vocabulary, some of them empty.
func randomDocs(seed uint64, n, vocab int) [][]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := make([]string, vocab)
	for i := range words {
		words[i] = "t" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
	}
	z := rand.NewZipf(rng, 1.2, 2, uint64(vocab-1))
	docs := make([][]string, n)
	for i := range docs {
		l := rng.IntN(40)
		if i%17 == 3 {
			l = 0
		}
		for range l {
			docs[i] = append(docs[i], words[z.Uint64()])
		}
	}
	return docs
}

func build(tb testing.TB, docs [][]string) *Index {
	tb.Helper()
	var b Builder
	for i, d := range docs {
		if err := b.Add(i, d); err != nil {
			tb.Fatal(err)
		}
	}
	return b.Build()
}

// bruteScores scores every document for query from the raw term lists,
// by the formula, with statistics of the documents all.
func bruteScores(all, docs [][]string, query []string, p BM25) []float64 {
	df := map[string]int{}
	var tokens int
	for _, d := range all {
		tokens += len(d)
		seen := map[string]bool{}
		for _, t := range d {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	n := float64(len(all))
	avg := float64(tokens) / n
	out := make([]float64, len(docs))
	for i, d := range docs {
		for _, qt := range query {
			tf := 0
			for _, t := range d {
				if t == qt {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[qt])+0.5)/(float64(df[qt])+0.5))
			out[i] += idf * float64(tf) / (float64(tf) + p.K1*(1-p.B+p.B*float64(len(d))/avg))
		}
	}
	return out
}

// bruteTop returns the k best rows (score > 0) by float32 score, then row.
func bruteTop(scores []float64, k int) ([]int32, []float32) {
	var rows []int32
	for i, s := range scores {
		if s > 0 {
			rows = append(rows, int32(i))
		}
	}
	slices.SortStableFunc(rows, func(a, b int32) int {
		sa, sb := float32(scores[a]), float32(scores[b])
		if sa != sb {
			if sa > sb {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	if len(rows) > k {
		rows = rows[:k]
	}
	s := make([]float32, len(rows))
	for i, r := range rows {
		s[i] = float32(scores[r])
	}
	return rows, s
}

func queriesOf(docs [][]string, n int) [][]string {
	rng := rand.New(rand.NewPCG(7, 7))
	var qs [][]string
	for range n {
		d := docs[rng.IntN(len(docs))]
		var q []string
		for range 1 + rng.IntN(4) {
			if len(d) > 0 {
				q = append(q, d[rng.IntN(len(d))])
			}
		}
		qs = append(qs, append(q, "absent"))
	}
	return append(qs, nil, []string{"absent"})
}

func TestSearchMatchesFormula(t *testing.T) {
	docs := randomDocs(1, 500, 300)
	ix := build(t, docs)
	qs := queriesOf(docs, 40)
	for _, p := range []BM25{DefaultBM25, {K1: 1.2, B: 0.75}, {K1: 0, B: 0}, {K1: 2, B: 1}} {
		for _, k := range []int{1, 10, 1000} {
			h, err := ix.Search(qs, k, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			for qi, q := range qs {
				wantRows, wantScores := bruteTop(bruteScores(docs, docs, q, p), k)
				rows, scores := h.Rows[qi*k:(qi+1)*k], h.Scores[qi*k:(qi+1)*k]
				n := len(wantRows)
				if !slices.Equal(rows[:n], wantRows) || slices.ContainsFunc(rows[n:], func(r int32) bool { return r != -1 }) {
					t.Fatalf("%+v k=%d query %q: rows %v, want %v", p, k, q, rows, wantRows)
				}
				for j := range n {
					if !near(scores[j], wantScores[j]) {
						t.Fatalf("%+v query %q hit %d: score %v, want %v", p, q, j, scores[j], wantScores[j])
					}
				}
			}
		}
	}
}

// TestShardsRankAsOne splits the rows over three shards, searches each with
// the summed statistics, and merges by score then global row: the result is
// the single index's, bit for bit.
func TestShardsRankAsOne(t *testing.T) {
	docs := randomDocs(2, 600, 200)
	qs := queriesOf(docs, 30)
	const k = 20
	whole, err := build(t, docs).Search(qs, k, DefaultBM25, nil)
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{0, 150, 420, 600}
	var shards []*Index
	var st Stats
	for s := range 3 {
		ix := build(t, docs[cuts[s]:cuts[s+1]])
		shards = append(shards, ix)
		st.Add(ix.Stats(qs))
	}
	type hit struct {
		row   int32
		score float32
	}
	for qi := range qs {
		var all []hit
		for s, ix := range shards {
			h, err := ix.Search(qs[qi:qi+1], k, DefaultBM25, &st)
			if err != nil {
				t.Fatal(err)
			}
			for j := range k {
				if h.Rows[j] >= 0 {
					all = append(all, hit{h.Rows[j] + int32(cuts[s]), h.Scores[j]})
				}
			}
		}
		slices.SortFunc(all, func(a, b hit) int {
			if a.score != b.score {
				if a.score > b.score {
					return -1
				}
				return 1
			}
			return int(a.row - b.row)
		})
		for j := range k {
			want := hit{whole.Rows[qi*k+j], whole.Scores[qi*k+j]}
			var got hit = hit{-1, 0}
			if j < len(all) {
				got = all[j]
			}
			if got != want {
				t.Fatalf("query %q hit %d: sharded %+v, one index %+v", qs[qi], j, got, want)
			}
		}
	}
}

func TestStatsErrors(t *testing.T) {
	ix := build(t, [][]string{{"a1", "b1"}, {"a1"}})
	q := [][]string{{"a1"}}
	own := ix.Stats(q)
	for name, st := range map[string]Stats{
		"fewer docs":  {Docs: 1, Tokens: own.Tokens, DF: own.DF},
		"fewer toks":  {Docs: own.Docs, Tokens: 1, DF: own.DF},
		"missing df":  {Docs: own.Docs, Tokens: own.Tokens},
		"small df":    {Docs: own.Docs, Tokens: own.Tokens, DF: map[string]int64{"a1": 1}},
		"df above n":  {Docs: own.Docs, Tokens: own.Tokens, DF: map[string]int64{"a1": 3}},
		"all is well": own,
	} {
		_, err := ix.Search(q, 5, DefaultBM25, &st)
		if name == "all is well" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		} else if !errors.Is(err, ErrStats) {
			t.Errorf("%s: error %v, want ErrStats", name, err)
		}
	}
	for _, p := range []BM25{{K1: -1, B: 0.4}, {K1: 1, B: 1.5}, {K1: math.NaN(), B: 0}, {K1: math.Inf(1), B: 0}} {
		if _, err := ix.Search(q, 5, p, nil); err == nil {
			t.Errorf("parameters %+v accepted", p)
		}
	}
	if _, err := ix.Search(q, 0, DefaultBM25, nil); err == nil {
		t.Error("k = 0 accepted")
	}
}

func TestEdgeCases(t *testing.T) {
	empty := (&Builder{}).Build()
	h, err := empty.Search([][]string{{"x1"}, nil}, 3, DefaultBM25, nil)
	if err != nil || !slices.Equal(h.Rows, []int32{-1, -1, -1, -1, -1, -1}) {
		t.Errorf("empty index: %v %v", h, err)
	}
	blank := build(t, [][]string{nil, nil})
	if h, err := blank.Search([][]string{{"x1"}}, 2, DefaultBM25, nil); err != nil || h.Rows[0] != -1 {
		t.Errorf("index of empty rows: %v %v", h, err)
	}
	// Equal documents tie: rows ascending.
	ix := build(t, [][]string{{"b1"}, {"a1", "a1"}, {"a1", "a1"}, {"a1", "a1"}})
	h, err = ix.Search([][]string{{"a1"}}, 2, DefaultBM25, nil)
	if err != nil || !slices.Equal(h.Rows, []int32{1, 2}) || h.Scores[0] != h.Scores[1] {
		t.Errorf("ties: %v %v", h, err)
	}
	// A repeated query term counts twice.
	h1, _ := ix.Search([][]string{{"a1"}}, 1, DefaultBM25, nil)
	h2, _ := ix.Search([][]string{{"a1", "zz", "a1"}}, 1, DefaultBM25, nil)
	if !near(h2.Scores[0], 2*h1.Scores[0]) {
		t.Errorf("repeated term: %v, single %v", h2.Scores[0], h1.Scores[0])
	}
}

func TestBuilderErrors(t *testing.T) {
	var b Builder
	if err := b.Add(1, nil); !errors.Is(err, ErrRow) {
		t.Errorf("row 1 first: %v", err)
	}
	if err := b.Add(0, []string{""}); err == nil {
		t.Error("empty term accepted")
	}
	if err := b.Add(0, []string{strings.Repeat("x", MaxTermBytes+1)}); err == nil {
		t.Error("over-long term accepted")
	}
	if err := b.Add(0, []string{"ok"}); err != nil || b.Len() != 1 {
		t.Errorf("after errors: %v, len %d", err, b.Len())
	}
}

func TestBadDocuments(t *testing.T) {
	tk := English.NewTokenizer()
	long := strings.Repeat("x", 1000)
	cases := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"stop words only", "The and of a an IS it", nil},
		{"5 MB without spaces", strings.Repeat("abcdefghij", 500_000), nil},
		{"5 MB of punctuation", strings.Repeat(".,;-", 1_250_000), nil},
		{"1,000 characters", long + " " + strings.Repeat("é", 1000), []string{long, strings.Repeat("é", 1000)}},
		{"invalid UTF-8", "caf\xe9 b\xffc ok", []string{"caf", "ok"}},
		{"MaxTermBytes", strings.Repeat("k", MaxTermBytes) + " " + strings.Repeat("k", MaxTermBytes-1) + "é ok",
			[]string{strings.Repeat("k", MaxTermBytes), "ok"}},
	}
	var b Builder
	for i, c := range cases {
		got := tk.Append(nil, c.text)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, trim(strings.Join(got, " ")), c.want)
		}
		if err := b.Add(i, got); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	ix := b.Build()
	h, err := ix.Search([][]string{{long}}, 3, DefaultBM25, nil)
	if err != nil || h.Rows[0] != 4 || h.Rows[1] != -1 || ix.Docs() != len(cases) {
		t.Errorf("search for the 1,000-character term: %v %v", h, err)
	}
}

func TestExplainSumsToScore(t *testing.T) {
	docs := randomDocs(3, 300, 100)
	ix := build(t, docs)
	qs := queriesOf(docs, 20)
	h, err := ix.Search(qs, 5, DefaultBM25, nil)
	if err != nil {
		t.Fatal(err)
	}
	for qi, q := range qs {
		for j := range 5 {
			r := h.Rows[qi*5+j]
			if r < 0 {
				continue
			}
			ms, err := ix.Explain(q, int(r), DefaultBM25, nil)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for _, m := range ms {
				sum += m.Score
				tf := 0
				for _, w := range docs[r] {
					if w == m.Term {
						tf++
					}
				}
				if tf == 0 || m.TF != tf {
					t.Errorf("row %d: match %+v not in %q", r, m, docs[r])
				}
			}
			if float32(sum) != h.Scores[qi*5+j] {
				t.Errorf("query %q row %d: parts sum to %v, score %v", q, r, sum, h.Scores[qi*5+j])
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, docs := range [][][]string{nil, {nil}, randomDocs(4, 400, 250)} {
		ix := build(t, docs)
		var buf bytes.Buffer
		n, err := ix.WriteTo(&buf)
		if err != nil || n != int64(buf.Len()) {
			t.Fatalf("WriteTo: %d bytes, %v (buffer %d)", n, err, buf.Len())
		}
		back, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		if back.Docs() != ix.Docs() || back.Tokens() != ix.Tokens() || back.NumTerms() != ix.NumTerms() ||
			back.termData != ix.termData || !slices.Equal(back.docLen, ix.docLen) || !slices.Equal(back.df, ix.df) ||
			!slices.Equal(back.postEnd, ix.postEnd) || !bytes.Equal(back.post, ix.post) || !slices.Equal(back.termEnd, ix.termEnd) {
			t.Fatalf("read back a different index")
		}
		var again bytes.Buffer
		back.WriteTo(&again)
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatal("rewritten bytes differ")
		}
	}
}

// resum rewrites the checksum of a file whose body was changed.
func resum(b []byte) []byte {
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b
}

func TestReadCorrupt(t *testing.T) {
	ix := build(t, randomDocs(5, 60, 40))
	var buf bytes.Buffer
	ix.WriteTo(&buf)
	good := buf.Bytes()
	check := func(what string, b []byte, size int64) {
		t.Helper()
		if _, err := Read(bytes.NewReader(b), size); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: error %v, want ErrCorrupt", what, err)
		}
	}
	for n := 0; n < len(good); n += 1 + n/50 {
		check("truncated", good[:n], int64(n))
	}
	check("size larger than the bytes", good, int64(len(good))+10)
	check("size smaller than the bytes", good, int64(len(good))-1)
	check("checksum", append(slices.Clone(good[:len(good)-1]), good[len(good)-1]^1), int64(len(good)))
	rng := rand.New(rand.NewPCG(9, 9))
	valid := 0
	for range 3000 {
		b := slices.Clone(good)
		pos := rng.IntN(len(b) - 4)
		b[pos] ^= byte(1 + rng.IntN(255))
		check("changed byte, checksum kept", b, int64(len(b)))
		// With the checksum made right, the parser's checks must catch
		// it, unless the change made another valid index (a term's
		// letter changed in place, keeping the order).
		ix, err := Read(bytes.NewReader(resum(b)), int64(len(b)))
		if err == nil {
			valid++
			if _, err := ix.Search([][]string{{"taa"}}, 5, DefaultBM25, nil); err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("changed byte at %d: %v", pos, err)
		}
	}
	if valid > 300 {
		t.Errorf("%d of 3000 changed files read as valid", valid)
	}
	// Header counts that would ask for huge allocations.
	for _, off := range []int{12, 16, 24, 32, 40} {
		b := slices.Clone(good)
		binary.LittleEndian.PutUint32(b[off:], 0xFFFFFFF0)
		check("huge count", resum(b), int64(len(b)))
	}
}

func TestAnalyzerNames(t *testing.T) {
	for _, name := range []string{"english", "none"} {
		a, err := ParseAnalyzer(name)
		if err != nil || a.Name() != name || a.String() != name {
			t.Errorf("%s: %v %v", name, a, err)
		}
		text, _ := a.MarshalText()
		var b Analyzer
		if err := b.UnmarshalText(text); err != nil || b != a {
			t.Errorf("%s: text round trip %v %v", name, b, err)
		}
	}
	if _, err := ParseAnalyzer("English"); !errors.Is(err, ErrAnalyzer) {
		t.Errorf("English: %v", err)
	}
	if _, err := Analyzer(9).MarshalText(); err == nil {
		t.Error("analyzer 9 marshalled")
	}
	for _, a := range []Analyzer{English, None} {
		if b, err := ParseIdentity(a.Identity()); err != nil || b != a {
			t.Errorf("%s: identity round trip %v %v", a, b, err)
		}
	}
	if _, err := ParseIdentity(Identity{Name: "english", Version: "0"}); !errors.Is(err, ErrAnalyzer) {
		t.Errorf("another version: %v", err)
	}
	if English.Version() == None.Version() || !strings.Contains(English.Version(), "unicode-14.0.0") {
		t.Errorf("versions %q and %q", English.Version(), None.Version())
	}
}

func TestFuseHits(t *testing.T) {
	h := Hits{K: 2, Rows: []int32{2, 0, 1, -1}, Scores: []float32{3, 2, 1, 0}}
	f, err := h.Fuse([]int32{10, 10, 11})
	if err != nil || !slices.Equal(f.Docs, []int32{11, 10, 10, -1}) || f.NumQueries() != 2 {
		t.Errorf("%v %v", f, err)
	}
	if _, err := h.Fuse([]int32{1}); err == nil {
		t.Error("row outside the table accepted")
	}
}

// TestConcurrentSearch searches one index from several goroutines, with
// two parameter sets so that the cached norms change under them.
func TestConcurrentSearch(t *testing.T) {
	docs := randomDocs(6, 300, 120)
	ix := build(t, docs)
	qs := queriesOf(docs, 20)
	params := []BM25{DefaultBM25, {K1: 1.2, B: 0.75}}
	want := make([]Hits, len(params))
	for i, p := range params {
		want[i], _ = ix.Search(qs, 10, p, nil)
	}
	done := make(chan error)
	for g := range 8 {
		go func() {
			for range 20 {
				p := g % 2
				h, err := ix.Search(qs, 10, params[p], nil)
				if err == nil && (!slices.Equal(h.Rows, want[p].Rows) || !slices.Equal(h.Scores, want[p].Scores)) {
					err = errors.New("results differ from a lone search")
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestLongQuery searches with a query of many distinct and repeated terms,
// past the linear look-up of weigh.
func TestLongQuery(t *testing.T) {
	docs := randomDocs(10, 200, 300)
	ix := build(t, docs)
	var q []string
	for _, d := range docs[:40] {
		q = append(q, d...)
	}
	h, err := ix.Search([][]string{q}, 20, DefaultBM25, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, scores := bruteTop(bruteScores(docs, docs, q, DefaultBM25), 20)
	if !slices.Equal(h.Rows, rows) {
		t.Fatalf("rows %v, want %v", h.Rows, rows)
	}
	for j := range rows {
		if !near(h.Scores[j], scores[j]) {
			t.Fatalf("hit %d: score %v, want %v", j, h.Scores[j], scores[j])
		}
	}
}

// TestHolds checks Holds against the documents' own words: for rows in any
// order, repeated, the query's distinct terms each holds, in query order.
func TestHolds(t *testing.T) {
	docs := randomDocs(5, 300, 60)
	ix := build(t, docs)
	qs := queriesOf(docs, 20)
	rows := []int{7, 0, 299, 7, 150, 3, 42, 298}
	for _, q := range qs {
		if len(q) > 0 {
			q = append(q, q[0], "no-such-term") // a repeated term, an unknown one
		}
		got, err := ix.Holds(q, rows)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			var want []string
			for _, term := range q {
				if slices.Contains(docs[r], term) && !slices.Contains(want, term) {
					want = append(want, term)
				}
			}
			if !slices.Equal(got[i], want) {
				t.Errorf("query %q row %d: %q, want %q", q, r, got[i], want)
			}
		}
	}
	if _, err := ix.Holds(qs[0], []int{300}); err == nil {
		t.Error("row 300 of 300: no error")
	}
}

func TestBM25Validate(t *testing.T) {
	for _, p := range []BM25{DefaultBM25, {K1: 0, B: 0}, {K1: MaxK1, B: 1}} {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	for _, tc := range []struct {
		p    BM25
		want string
	}{
		{BM25{K1: math.Inf(1), B: 0.4}, "k1 +Inf: want a number from 0 to 3"},
		{BM25{K1: math.NaN(), B: 0.4}, "k1 NaN"},
		{BM25{K1: 1e300, B: 0.4}, "k1 1e+300"},
		{BM25{K1: 3.01, B: 0.4}, "k1 3.01"},
		{BM25{K1: -1, B: 0.4}, "k1 -1"},
		{BM25{K1: 0.9, B: math.NaN()}, "b NaN: want a number from 0 to 1"},
		{BM25{K1: 0.9, B: math.Inf(-1)}, "b -Inf"},
		{BM25{K1: 0.9, B: 1.5}, "b 1.5"},
	} {
		if err := tc.p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error saying %q", tc.p, err, tc.want)
		}
	}
}
