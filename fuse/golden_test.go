package fuse_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/msrag/msrag/fuse"
)

// goldenWindows are the windows' chunk hits that every golden file of the
// NumPy references (scripts/gen_fuse_*golden.py) holds.
type goldenWindows struct {
	NQ      int `json:"nq"`
	NDocs   int `json:"ndocs"`
	Windows []struct {
		K      int       `json:"k"`
		Docs   []int32   `json:"docs"`
		Scores []float32 `json:"scores"`
	} `json:"windows"`
}

// hits returns the windows idx as fuse.Hits.
func (g goldenWindows) hits(idx ...int) []fuse.Hits {
	var ws []fuse.Hits
	for _, i := range idx {
		w := g.Windows[i]
		ws = append(ws, fuse.Hits{K: w.K, Docs: w.Docs, Scores: w.Scores})
	}
	return ws
}

// readGolden decodes testdata/name into v.
func readGolden(tb testing.TB, name string, v any) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("testdata/%s: %v", name, err)
	}
}

// closeTo reports whether a and b agree to 1e-12, relative or absolute.
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

// goldenFile is written by scripts/gen_fuse_golden.py.
type goldenFile struct {
	goldenWindows
	Cases []struct {
		Name     string  `json:"name"`
		Method   string  `json:"method"`
		K        int     `json:"k"`
		C        float64 `json:"c"`
		RankBase int     `json:"rank_base"`
		Windows  []int   `json:"windows"`
		Queries  [][]struct {
			Doc      int32        `json:"doc"`
			Score    float64      `json:"score"`
			Evidence [][4]float64 `json:"evidence"`
		} `json:"queries"`
	} `json:"cases"`
}

func loadGolden(tb testing.TB) goldenFile {
	var g goldenFile
	readGolden(tb, "golden.json", &g)
	return g
}

func TestFuseMatchesReference(t *testing.T) {
	g := loadGolden(t)
	for _, c := range g.Cases {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.Name, workers), func(t *testing.T) {
				ws := g.hits(c.Windows...)
				opt := fuse.Options{K: c.K, C: c.C, RankBase: c.RankBase, Workers: workers}
				var r *fuse.Ranking
				var err error
				switch c.Method {
				case "rrf":
					r, err = fuse.RRF(ws, g.NDocs, opt)
				case "maxp":
					r, err = fuse.MaxP(ws, g.NDocs, opt)
				case "single":
					r, err = fuse.Single(ws[0], g.NDocs, opt)
				}
				if err != nil {
					t.Fatal(err)
				}
				if r.NQ != g.NQ {
					t.Fatalf("NQ %d, want %d", r.NQ, g.NQ)
				}
				for q, want := range c.Queries {
					docs, scores := r.Query(q)
					if len(docs) != len(want) {
						t.Fatalf("query %d: %d documents, want %d", q, len(docs), len(want))
					}
					for i, wd := range want {
						if docs[i] != wd.Doc || math.Abs(scores[i]-wd.Score) > 1e-12 {
							t.Fatalf("query %d rank %d: doc %d score %.17g, want doc %d score %.17g", q, i, docs[i], scores[i], wd.Doc, wd.Score)
						}
						ev := r.EvidenceOf(q, i)
						if len(ev) != len(wd.Evidence) {
							t.Fatalf("query %d rank %d: %d evidence entries %v, want %v", q, i, len(ev), ev, wd.Evidence)
						}
						for j, e := range ev {
							we := wd.Evidence[j]
							if float64(e.Window) != we[0] || float64(e.Pos) != we[1] || float64(e.Rank) != we[2] || float64(e.Score) != we[3] {
								t.Fatalf("query %d rank %d evidence %d: %+v, want %v", q, i, j, e, we)
							}
						}
					}
					for i := len(docs); i < r.K; i++ {
						if len(r.EvidenceOf(q, i)) != 0 {
							t.Fatalf("query %d: empty slot %d has evidence", q, i)
						}
					}
				}
			})
		}
	}
}
