package tune

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/channel"
	"github.com/msrag/msrag/channel/bm25"
	"github.com/msrag/msrag/channel/dense"
	"github.com/msrag/msrag/chunk"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/embedders"
	"github.com/msrag/msrag/fusion"
	"github.com/msrag/msrag/internal/hashembed"
	"github.com/msrag/msrag/onnx"
	"github.com/msrag/msrag/router"
)

// tinySet builds an index of the test dataset and searches its train split.
func tinySet(t *testing.T) (*msrag.Index, *Set) { return tinySetWith(t, nil) }

// tinySetWith is tinySet, the index with lexical windows when lex is set.
func tinySetWith(t *testing.T, lex *bm25.Config) (*msrag.Index, *Set) {
	t.Helper()
	return tinySetOf(t, 160, append(chunk.Sizes(8, 16, 32), chunk.Full), lex)
}

// tinySetOf builds an index of windows of a test dataset of ndocs
// documents and searches its train split.
func tinySetOf(t *testing.T, ndocs int, windows []chunk.Window, lex *bm25.Config) (*msrag.Index, *Set) {
	t.Helper()
	if _, err := onnx.ResolveModel("all-minilm-l6-v2"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	emb, err := embedders.OpenHash()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if err := hashembed.WriteDataset(data, ndocs); err != nil {
		t.Fatal(err)
	}
	ds, _ := corpus.OpenDataset(data)
	src, err := ds.OpenCorpus(corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ix, err := msrag.Build(context.Background(), src, msrag.Config{Embedder: emb, Windows: windows, Channels: withLexical(lex)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	set, err := Load(context.Background(), ix, data, "train", 16, 30)
	if err != nil {
		t.Fatal(err)
	}
	return ix, set
}

// TestFitLinearNeverLosesToItsStarts: coordinate ascent only keeps changes
// that raise the training score, so the fitted rule scores at least as well
// on the training queries as each rule it starts from.
func TestFitLinearNeverLosesToItsStarts(t *testing.T) {
	t.Run("dense", func(t *testing.T) { fitNeverLoses(t, nil) })
	// Lexical channels are coefficients like the dense windows'; the rule
	// starts from the same rules over every kind.
	t.Run("lexical", func(t *testing.T) { fitNeverLoses(t, defaultLexical()) })
}

func fitNeverLoses(t *testing.T, lex *bm25.Config) {
	ix, set := tinySetWith(t, lex)
	all, sliding, hybrid := names(ix.Layout())
	if lex != nil && (len(all) != 9 || all[8] != "bm25-doc" || len(sliding) != 3) {
		t.Fatalf("channels %v, starts over %v", all, sliding)
	}
	lin, err := FitLinear(Sets{set}, 0, all, sliding, hybrid)
	if err != nil {
		t.Fatal(err)
	}
	starts := []string{"combsum:norm=zscore", "rrf", "docrrf"}
	if lex != nil {
		starts = []string{"combsum:norm=zscore,windows=all", "rrf:windows=all", "docrrf:windows=all"}
	}
	for _, s := range starts {
		f, _ := fusion.Parse(s)
		_, sc, err := set.Score(f)
		if err != nil {
			t.Fatal(err)
		}
		if lin.Score < sc-1e-12 {
			t.Errorf("learned %s scores %v on its training queries, below %s's %v", lin.Fusion, lin.Score, s, sc)
		}
	}
	if _, sc, _ := set.Score(lin.Fusion); sc != lin.Score {
		t.Errorf("the fitted rule scores %v again, %v when fitted", sc, lin.Score)
	}
}

func TestSubsetAndFolds(t *testing.T) {
	_, set := tinySet(t)
	sub := set.Subset([]int{2, 0})
	if sub.Hits.NQ != 2 || sub.IDs[0] != set.IDs[2] || len(sub.Hits.Queries) != 2*set.Hits.Dims {
		t.Fatalf("subset: %d queries, ids %v", sub.Hits.NQ, sub.IDs)
	}
	a, _, _ := set.Score(fusion.Single("w8"))
	b, _, _ := sub.Score(fusion.Single("w8"))
	if b[0] != a[2] || b[1] != a[0] {
		t.Errorf("a subset scores its queries as the whole set did: %v vs %v", b, []float64{a[2], a[0]})
	}
	ids := []string{"m1-a", "m2-a", "m1-b", "m3-a", "m2-b", "m3-b", "m4-a"}
	group := func(id string) string { return id[:2] }
	fold := groupFolds(ids, group, 3, 7)
	byGroup := map[string]int{}
	seen := map[int]bool{}
	for q, id := range ids {
		if f, ok := byGroup[group(id)]; ok && f != fold[q] {
			t.Errorf("group %s is split over folds %d and %d", group(id), f, fold[q])
		}
		byGroup[group(id)] = fold[q]
		seen[fold[q]] = true
	}
	if len(seen) != 3 {
		t.Errorf("4 groups dealt into %d of 3 folds", len(seen))
	}
}

// TestFitSeveralDatasets fits one model on two datasets' training queries:
// it maximises the mean of the two means, its router reads the kind
// features by default, it records both datasets, and a fit over indices of
// other windows is refused before any search.
func TestFitSeveralDatasets(t *testing.T) {
	windows := append(chunk.Sizes(8, 16, 32), chunk.Full)
	_, a := tinySetOf(t, 160, windows, defaultLexical())
	_, b := tinySetOf(t, 120, windows, defaultLexical())
	ss := Sets{a, b}
	m, err := Fit(ss, []Training{{Dataset: "a", Split: "train"}, {Dataset: "b", Split: "train"}}, Options{Folds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.Router == nil || m.Router.Set() != router.Kinds || !m.Transfers() || len(m.Training) != 2 || m.Training[1].Dataset != "b" || len(m.Training[1].QueryIDs) != len(b.IDs) {
		t.Fatalf("router %+v, transfers %v, training %+v", m.Router, m.Transfers(), m.Training)
	}
	f, err := m.Fusion(false)
	if err != nil {
		t.Fatal(err)
	}
	_, sa, _ := a.Score(f)
	_, sb, _ := b.Score(f)
	var ch Choice
	if err := json.Unmarshal(m.Choice, &ch); err != nil {
		t.Fatal(err)
	}
	if got := ch.Train["learned"]; math.Abs(got-(sa+sb)/2) > 1e-12 {
		t.Errorf("training score %v, want the mean of the datasets' means (%v + %v) / 2", got, sa, sb)
	}
	routed, _ := m.Fusion(true)
	if _, _, err := a.Score(routed); err != nil {
		t.Errorf("the kinds router on a dataset it was fitted on: %v", err)
	}
	_, other := tinySetOf(t, 120, append(chunk.Sizes(8, 16), chunk.Full), defaultLexical())
	if err := (Sets{a, other}).Check(); !errors.Is(err, msrag.ErrIndexMismatch) || !strings.Contains(err.Error(), "one set of windows") {
		t.Errorf("indices of other windows: %v", err)
	}
	if err := CheckFusionModel(other.Index, m); !errors.Is(err, msrag.ErrIndexMismatch) {
		t.Errorf("a model of windows 8, 16, 32 on an index of 8, 16: %v", err)
	}
}

// defaultLexical is bm25.DefaultConfig.
func defaultLexical() *bm25.Config {
	c := bm25.DefaultConfig()
	return &c
}

// withLexical is the channels of a build with a model: dense, and lexical
// with lex unless it is nil.
func withLexical(lex *bm25.Config) []channel.Params {
	out := []channel.Params{dense.Params{}}
	if lex != nil {
		out = append(out, *lex)
	}
	return out
}

// TestLossAversion: at loss aversion a, a query counts its nDCG@10 less a
// times what it loses against the index's default fusion (computed here
// from the two rules' per-query scores), the fit scores at least each of
// its starts by that count, and a fit that weighs losses heavily loses no
// more against the default than one that does not, in total, on its
// training queries.
func TestLossAversion(t *testing.T) {
	ix, set := tinySetWith(t, defaultLexical())
	all, sliding, hybrid := names(ix.Layout())
	base, _, err := set.Score(fusion.Default(ix.Layout()))
	if err != nil {
		t.Fatal(err)
	}
	counted := func(f fusion.Fusion, a float64) (score, lost float64) {
		per, _, err := set.Score(f)
		if err != nil {
			t.Fatal(err)
		}
		for q, v := range per {
			score += v
			if d := base[q] - v; d > 0 {
				score -= a * d
				lost += d
			}
		}
		return score / float64(len(per)), lost
	}
	const a = 4
	averse, err := FitLinear(Sets{set}, a, all, sliding, hybrid)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := FitLinear(Sets{set}, 0, all, sliding, hybrid)
	if err != nil {
		t.Fatal(err)
	}
	got, lostAverse := counted(averse.Fusion, a)
	if math.Abs(got-averse.Score) > 1e-12 {
		t.Errorf("fit's score %v, counted %v", averse.Score, got)
	}
	for _, s := range []string{"combsum:norm=zscore,windows=all", "rrf:windows=all", "docrrf:windows=all"} {
		f, _ := fusion.Parse(s)
		if sc, _ := counted(f, a); averse.Score < sc-1e-12 {
			t.Errorf("fitted at loss aversion %d: %v, below its start %s's %v", a, averse.Score, s, sc)
		}
	}
	_, lostPlain := counted(plain.Fusion, 0)
	if lostAverse > lostPlain+1e-12 {
		t.Errorf("fitted at loss aversion %d it loses %v nDCG@10 against the default over the queries, %v at 0", a, lostAverse, lostPlain)
	}
	// Where losses weigh so much that every cross-validated score is far
	// below -1, the router's penalty is still one of Lambdas. The rule
	// routed is RRF over every channel, which loses against the default on
	// some training query (the fits may be the default itself).
	routed, _ := fusion.Parse("rrf:windows=all")
	if _, lost := counted(routed, 0); lost == 0 {
		t.Fatalf("%s loses nothing against the default %s: the router's case needs a loss", routed, fusion.Default(ix.Layout()))
	}
	sel, err := routed.Select(ix.Layout())
	if err != nil {
		t.Fatal(err)
	}
	var fused []string
	for _, i := range sel {
		fused = append(fused, ix.Layout()[i].Name())
	}
	_, rc, err := FitRouter(Sets{set}, 1e6, routed, fused, router.EmbeddingWindows, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(Lambdas, rc.Lambda) || rc.CV["none"] > -1 {
		t.Errorf("at loss aversion 1e6 the router's penalty is %v (cross-validated %v), want one of %v", rc.Lambda, rc.CV, Lambdas)
	}
	if _, err := FitLinear(Sets{set}, -1, all, sliding, hybrid); err == nil || !strings.Contains(err.Error(), "loss aversion -1") {
		t.Errorf("loss aversion -1: %v", err)
	}
}
