package eval_test

import (
	"errors"
	"math"
	"testing"

	"github.com/msrag/msrag/eval"
)

func results(vals map[string]float64) eval.Results {
	r := eval.Results{Metrics: []string{"m"}, PerQuery: map[string]map[string]float64{}, Mean: map[string]float64{}}
	for id, v := range vals {
		r.PerQuery[id] = map[string]float64{"m": v}
	}
	return r
}

func TestCompare(t *testing.T) {
	a := results(map[string]float64{"q1": 1, "q2": 0.5, "q3": 0.2, "q4": 0, "x": 1})
	b := results(map[string]float64{"q1": 0.5, "q2": 0.5, "q3": 0.4, "q4": 0})
	p, err := eval.Compare(a, b, "m")
	if err != nil {
		t.Fatal(err)
	}
	if p.Queries != 4 || p.Wins != 1 || p.Ties != 2 || p.Losses != 1 || math.Abs(p.Diff-0.075) > 1e-15 {
		t.Errorf("Compare = %+v; want 4 queries, 1 win, 2 ties, 1 loss, diff 0.075", p)
	}
	// Every resampled mean lies between the smallest and largest difference.
	if p.Lo > p.Diff || p.Hi < p.Diff || p.Lo < -0.2 || p.Hi > 0.5 {
		t.Errorf("interval [%v, %v] around %v", p.Lo, p.Hi, p.Diff)
	}
	if q, _ := eval.Compare(a, b, "m"); q != p {
		t.Errorf("a second comparison differs: %+v, %+v", q, p)
	}
	same, _ := eval.Compare(b, b, "m")
	if same.Diff != 0 || same.Lo != 0 || same.Hi != 0 || same.Ties != 4 {
		t.Errorf("a result against itself: %+v", same)
	}
	if _, err := eval.Compare(a, results(map[string]float64{"z": 1}), "m"); !errors.Is(err, eval.ErrMismatch) {
		t.Errorf("no shared query: %v", err)
	}
	if _, err := eval.Compare(a, b, "other"); !errors.Is(err, eval.ErrMismatch) {
		t.Errorf("missing metric: %v", err)
	}
}

// TestCompareInterval: with many queries whose differences are all +1 or
// -1 in equal numbers, the interval is close to the normal approximation
// 0 +- 1.96 / sqrt(n).
func TestCompareInterval(t *testing.T) {
	va, vb := map[string]float64{}, map[string]float64{}
	for i := range 2000 {
		id := string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		va[id], vb[id] = float64(i%2), float64(1-i%2)
	}
	p, err := eval.Compare(results(va), results(vb), "m")
	if err != nil {
		t.Fatal(err)
	}
	want := 1.96 / math.Sqrt(2000)
	if math.Abs(p.Hi-want) > 0.01 || math.Abs(p.Lo+want) > 0.01 {
		t.Errorf("interval [%v, %v], want about +-%v", p.Lo, p.Hi, want)
	}
}
