// Package benchdata makes the synthetic inputs that the search benchmarks share
// (the root package's BenchmarkSearch and scripts/searchbench), so both measure
// the same queries.
package benchdata

import (
	"math"
	"math/rand/v2"
)

// PerturbQueries repeats the rows of base (row-major, dims wide) to n rows;
// rows past the first len(base)/dims get fixed-seed Gaussian noise and are
// normalised again, so every query is distinct but realistic.
func PerturbQueries(base []float32, dims, n int, seed uint64) []float32 {
	nb := len(base) / dims
	rng := rand.New(rand.NewPCG(seed, seed))
	out := make([]float32, n*dims)
	sigma := 0.1 / math.Sqrt(float64(dims))
	for i := range n {
		row := out[i*dims : (i+1)*dims]
		copy(row, base[(i%nb)*dims:])
		if i < nb {
			continue
		}
		var norm float64
		for d := range row {
			row[d] += float32(rng.NormFloat64() * sigma)
			norm += float64(row[d]) * float64(row[d])
		}
		inv := float32(1 / math.Sqrt(norm))
		for d := range row {
			row[d] *= inv
		}
	}
	return out
}
