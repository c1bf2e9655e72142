// Package scripts carries the scripts msrag hands out with its outputs:
// CheckMetrics is scripts/check_metrics.py, which msrag eval writes beside
// its runs so that the check command it prints runs from any directory.
package scripts

import _ "embed"

// CheckMetrics is the text of check_metrics.py: every metric of runs
// recomputed by pytrec_eval (and MTEB's evaluator with --mteb).
//
//go:embed check_metrics.py
var CheckMetrics []byte
