package eval_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/msrag/msrag/eval"
)

var resultsOut = flag.String("results-out", "", "also write the Results JSON of the golden runs to this directory, for scripts/check_metrics.py")

// TestResultsJSON checks that Results survive a JSON round trip and, with
// -results-out, writes them for scripts/check_metrics.py:
//
//	go test ./eval -run TestResultsJSON -results-out /tmp/r
//	.cache/venv/eval/bin/python scripts/check_metrics.py --qrels eval/testdata/golden/random.qrels \
//	    --results /tmp/r/random.json eval/testdata/golden/random.run
func TestResultsJSON(t *testing.T) {
	metrics := append(eval.DefaultMetrics(), "recip_rank", "recip_rank_7")
	for _, name := range []string{"ties", "missing", "graded", "random"} {
		t.Run(name, func(t *testing.T) {
			q, r, _ := loadGolden(t, name)
			res, err := eval.Evaluate(q, r, metrics...)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.MarshalIndent(res, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			var back eval.Results
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, res) {
				t.Fatal("Results changed in a JSON round trip")
			}
			if *resultsOut != "" {
				if err := os.WriteFile(filepath.Join(*resultsOut, name+".json"), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
