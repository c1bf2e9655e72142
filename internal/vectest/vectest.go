// Package vectest compares embedding vectors for the tests of any package:
// the one cosine they measure agreement with a reference by.
package vectest

import "math"

// Cosine returns the cosine of the angle between a and b, accumulated in
// float64; 0 when either is all zeros. a and b must have the same length.
func Cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return ab / math.Sqrt(aa*bb)
}
