package router_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/msrag/msrag/router"
)

type golden struct {
	Inputs  int       `json:"inputs"`
	Windows int       `json:"windows"`
	X       []float64 `json:"x"`
	Y       []float64 `json:"y"`
	HeldOut []float64 `json:"held_out"`
	Cases   []struct {
		Lambda  float64   `json:"lambda"`
		Mean    []float64 `json:"mean"`
		Std     []float64 `json:"std"`
		W       []float64 `json:"w"`
		Predict []float64 `json:"predict"`
	} `json:"cases"`
}

func near(a, b []float64, tol float64) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol*max(1, math.Abs(b[i])) {
			return i
		}
	}
	return -1
}

// TestFitMatchesReference fits the golden training set and compares the
// standardisation, the coefficients and the held-out predictions with the
// NumPy reference (scripts/gen_router_golden.py).
func TestFitMatchesReference(t *testing.T) {
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	names := []string{"w100", "w200", "w500"}[:g.Windows]
	for _, c := range g.Cases {
		m, err := router.Fit(g.X, g.Inputs, g.Y, names, c.Lambda)
		if err != nil {
			t.Fatal(err)
		}
		for what, pair := range map[string][2][]float64{"mean": {m.Mean, c.Mean}, "std": {m.Std, c.Std}, "w": {m.W, c.W}} {
			if i := near(pair[0], pair[1], 1e-9); i >= 0 {
				t.Fatalf("lambda %v: %s differs at %d: %v, want %v", c.Lambda, what, i, pair[0], pair[1])
			}
		}
		p, err := m.Predict(g.HeldOut)
		if err != nil {
			t.Fatal(err)
		}
		if i := near(p, c.Predict, 1e-9); i >= 0 {
			t.Fatalf("lambda %v: prediction %d = %v, want %v", c.Lambda, i, p[i], c.Predict[i])
		}
		w, _ := m.Weights(g.HeldOut[:g.Inputs])
		if s := w[0] + w[1] + w[2]; math.Abs(s-3) > 1e-12 {
			t.Errorf("weights %v sum to %v, want the number of windows", w, s)
		}
	}
}

func TestShapes(t *testing.T) {
	if _, err := router.Fit([]float64{1, 2, 3}, 2, []float64{1}, []string{"a"}, 0); !errors.Is(err, router.ErrShape) {
		t.Errorf("ragged input: %v", err)
	}
	x, err := router.Inputs([]float32{1, 2, 3, 4}, 2, []float64{5, 6, 7, 8}, 2, 1)
	if err != nil || near(x, []float64{1, 2, 5, 6, 3, 4, 7, 8}, 0) >= 0 {
		t.Errorf("Inputs = %v, %v", x, err)
	}
	if _, err := router.Inputs([]float32{1, 2}, 2, []float64{5}, 2, 1); !errors.Is(err, router.ErrShape) {
		t.Errorf("too few features: %v", err)
	}
	p := router.SoftTargets([]float64{0.5, 0.5, 1, 0}, 2, 0.1)
	if near(p, []float64{0.5, 0.5, 1 / (1 + math.Exp(-10)), math.Exp(-10) / (1 + math.Exp(-10))}, 1e-12) >= 0 {
		t.Errorf("SoftTargets = %v", p)
	}
}

// TestValidate: a model whose fields disagree is refused naming the field,
// and Predict refuses it instead of dividing by zero or indexing past W.
func TestValidate(t *testing.T) {
	good := func() *router.Model {
		return &router.Model{Channels: []string{"a", "b"}, Inputs: 2, Mean: []float64{0, 0}, Std: []float64{1, 1}, W: make([]float64, 6)}
	}
	for _, tc := range []struct {
		name string
		edit func(m *router.Model)
		want string
	}{
		{"inputs zero", func(m *router.Model) { m.Inputs = 0 }, "inputs: 0"},
		{"no windows", func(m *router.Model) { m.Channels = nil }, "windows: none"},
		{"repeated window", func(m *router.Model) { m.Channels = []string{"a", "a"} }, `windows[1]: "a"`},
		{"mean short", func(m *router.Model) { m.Mean = m.Mean[:1] }, "mean: 1 values for 2 inputs"},
		{"std negative", func(m *router.Model) { m.Std[1] = -1 }, "std[1]: -1"},
		{"w NaN", func(m *router.Model) { m.W[3] = math.NaN() }, "w[3]: NaN"},
		{"w long", func(m *router.Model) { m.W = make([]float64, 7) }, "w: 7 values"},
	} {
		m := good()
		tc.edit(m)
		err := m.Validate()
		if !errors.Is(err, router.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Validate: %v, want %q", tc.name, err, tc.want)
		}
		if _, err := m.Predict([]float64{1, 2}); !errors.Is(err, router.ErrInvalid) {
			t.Errorf("%s: Predict: %v, want router.ErrInvalid", tc.name, err)
		}
	}
	if err := good().Validate(); err != nil {
		t.Errorf("valid model: %v", err)
	}
	if err := good().CheckInputs(1, 1); err == nil {
		t.Error("CheckInputs(1, 1) of 2 inputs over 2 windows (want 3) passed")
	}
}
