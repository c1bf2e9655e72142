package report_test

import (
	"os"

	"github.com/msrag/msrag/eval"
	"github.com/msrag/msrag/report"
)

func ExampleWriteSummary() {
	res := func(ndcg, cdr1 float64) eval.Results {
		return eval.Results{NumQueries: 2, Mean: map[string]float64{"ndcg_cut_10": ndcg, "cdr_1": cdr1}}
	}
	e := &report.Eval{
		Dataset: "toy", Split: "test", Model: report.Model{Name: "some-model"},
		Windows: []int{100, 200}, K: 100, ChannelK: 100, Queries: 2, Docs: 5,
		Configs: []report.Config{
			{Name: "w100", Kind: report.KindWindow, Results: res(0.5, 0.5)},
			{Name: "w200", Kind: report.KindWindow, Results: res(0.625, 0.5)},
			{Name: "rrf", Kind: "rrf", Results: res(0.75, 1)},
			{Name: "oracle", Kind: report.KindOracle, UpperBound: true, Results: res(0.75, 1)},
		},
	}
	report.WriteSummary(os.Stdout, e)
	// Output:
	// # toy (test split): multi-scale retrieval with some-model
	//
	// 2 queries, 5 documents; windows 100, 200 tokens; full-document window: none; 100 chunks per window, 100 documents per query; rrf is RRF over every window with c = 1 and ranks from 0 unless its name says otherwise.
	//
	// | dataset | queries | channels | best single channel | nDCG@10 best | nDCG@10 full | rrf | nDCG@10 rrf | rrf − best |
	// |---|---:|---|---|---:|---:|---|---:|---:|
	// | toy | 2 | dense | w200 | 62.50 | — | rrf | 75.00 | +12.50 |
	//
	// | configuration | cdr@1 |
	// |---|---:|
	// | w100 | 50.00 |
	// | w200 | 50.00 |
	// | rrf | 100.00 |
	// | oracle (upper bound) | 100.00 |
}
