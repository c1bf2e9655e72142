//go:build race

package tokenizer_test

// raceEnabled thins the golden tests under the race detector, which makes
// them ten times slower; the full vectors run without it (make test runs
// both, CGO_ENABLED=0 go test being the full run).
const raceEnabled = true
