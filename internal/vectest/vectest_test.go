package vectest

import (
	"math"
	"testing"
)

func TestCosine(t *testing.T) {
	for _, c := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{0, 1}, 0},
		{[]float32{1, 2}, []float32{2, 4}, 1},
		{[]float32{1, 0}, []float32{-1, 0}, -1},
		{[]float32{3, 4}, []float32{4, 3}, 24.0 / 25},
		{[]float32{0, 0}, []float32{1, 1}, 0},
	} {
		if got := Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
