package eval_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/msrag/msrag/eval"
)

func ExampleEvaluate() {
	qrels := eval.Qrels{"q1": {"d1": 1}, "q2": {"d7": 2}} // corpus.ReadQrels reads files

	run, _ := eval.ReadRun(strings.NewReader(
		"q1 Q0 d3 1 0.9 demo\n"+
			"q1 Q0 d1 2 0.8 demo\n"+
			"q2 Q0 d7 1 0.5 demo\n"), "demo.run")
	res, err := eval.Evaluate(qrels, run, "ndcg_cut_10", "mrr_10", "cdr_1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range res.Metrics {
		fmt.Printf("%-12s q1=%.4f q2=%.4f mean=%.4f\n", m, res.PerQuery["q1"][m], res.PerQuery["q2"][m], res.Mean[m])
	}
	// Output:
	// ndcg_cut_10  q1=0.6309 q2=1.0000 mean=0.8155
	// mrr_10       q1=0.5000 q2=1.0000 mean=0.7500
	// cdr_1        q1=0.0000 q2=1.0000 mean=0.5000
}

func ExampleWriteRun() {
	run := eval.Run{"q1": {{Doc: "a", Score: 0.5}, {Doc: "b", Score: 0.5}, {Doc: "c", Score: 0.75}}}
	// Equal scores are ranked by document id, descending, as trec_eval ranks them.
	if err := eval.WriteRun(os.Stdout, run, "demo"); err != nil {
		fmt.Println(err)
	}
	// Output:
	// q1 Q0 c 1 0.75 demo
	// q1 Q0 b 2 0.5 demo
	// q1 Q0 a 3 0.5 demo
}

func ExampleOracle() {
	qrels := eval.Qrels{"q1": {"a": 1}, "q2": {"b": 1}}
	small := eval.Run{"q1": {{Doc: "a", Score: 1}}, "q2": {{Doc: "x", Score: 1}, {Doc: "b", Score: 0}}}
	large := eval.Run{"q1": {{Doc: "x", Score: 1}}, "q2": {{Doc: "b", Score: 1}}}
	rs, _ := eval.Evaluate(qrels, small, "cdr_1")
	rl, _ := eval.Evaluate(qrels, large, "cdr_1")
	o, err := eval.Oracle([]string{"w100", "w500"}, []eval.Results{rs, rl})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("cdr_1:", rs.Mean["cdr_1"], rl.Mean["cdr_1"], "oracle", o.Mean["cdr_1"])
	fmt.Println("best counts:", o.BestCounts("cdr_1"))
	// Output:
	// cdr_1: 0.5 0.5 oracle 1
	// best counts: [1 1]
}
