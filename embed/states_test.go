package embed

import "testing"

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	Normalize(v)
	if v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("Normalize(3, 4) = %v, want (0.6, 0.8)", v)
	}
	z := []float32{0, 0}
	Normalize(z)
	if z[0] != 0 || z[1] != 0 {
		t.Fatalf("Normalize(0, 0) = %v, want it left at 0", z)
	}
}
