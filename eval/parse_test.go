package eval_test

import (
	"bytes"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// readQrels parses qrels text as corpus reads them.
func readQrels(tb testing.TB, text, name string) eval.Qrels {
	tb.Helper()
	rows, err := corpus.ParseQrels(strings.NewReader(text), name)
	if err != nil {
		tb.Fatal(err)
	}
	return corpus.Judgements(rows)
}

func TestReadRun(t *testing.T) {
	tests := []struct {
		name, in string
		want     eval.Run
		err      error
		msg      string
	}{
		{name: "file order kept", in: "q1 Q0 b 1 0.5 t\nq1 Q0 a 2 0.75 t\nq2 Q0 a 1 -3e2 t\n",
			want: eval.Run{"q1": {{"b", 0.5}, {"a", 0.75}}, "q2": {{"a", -300}}}},
		{name: "tabs and blank lines", in: "\nq1\tQ0\tb\t7\t1\tt\n", want: eval.Run{"q1": {{"b", 1}}}},
		{name: "five fields", in: "q1 Q0 b 1 0.5\n", err: eval.ErrSyntax, msg: "run.txt:1: eval: syntax error: want 6 fields"},
		{name: "rank not integer", in: "q1 Q0 b x 0.5 t\n", err: eval.ErrSyntax, msg: `rank "x"`},
		{name: "score not number", in: "q1 Q0 b 1 abc t\n", err: eval.ErrScore, msg: `score "abc" of query "q1", document "b"`},
		{name: "score NaN", in: "q1 Q0 b 1 NaN t\n", err: eval.ErrScore, msg: "run.txt:1:"},
		{name: "duplicate", in: "q1 Q0 b 1 1 t\nq1 Q0 b 2 0 t\n", err: eval.ErrDuplicate, msg: "run.txt:2: eval: duplicate document: query \"q1\", document \"b\" already listed on line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := eval.ReadRun(strings.NewReader(tt.in), "run.txt")
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("error %v; want %v containing %q", err, tt.err, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWriteQrelsRoundTrip(t *testing.T) {
	q := eval.Qrels{"q2": {"b": 0, "a": 3}, "q1": {"z": -1}}
	for _, f := range []eval.QrelsFormat{eval.QrelsTSV, eval.QrelsTREC} {
		var buf bytes.Buffer
		if err := eval.WriteQrels(&buf, q, f); err != nil {
			t.Fatal(err)
		}
		got := readQrels(t, buf.String(), "round trip")
		if !reflect.DeepEqual(got, q) {
			t.Errorf("format %d: got %v, want %v", f, got, q)
		}
	}
	if err := eval.WriteQrels(&bytes.Buffer{}, eval.Qrels{"q 1": {"a": 1}}, eval.QrelsTSV); !errors.Is(err, eval.ErrID) {
		t.Errorf("id with a space: error %v, want ErrID", err)
	}
}

func TestEvaluateErrors(t *testing.T) {
	q := eval.Qrels{"q1": {"a": 1}}
	tests := []struct {
		name    string
		run     eval.Run
		metrics []string
		err     error
	}{
		{"unknown metric", eval.Run{}, []string{"ndcg_10"}, eval.ErrMetric},
		{"zero cutoff", eval.Run{}, []string{"P_0"}, eval.ErrMetric},
		{"repeated metric", eval.Run{}, []string{"P_1", "P_1"}, eval.ErrMetric},
		{"duplicate hit", eval.Run{"q1": {{"a", 1}, {"a", 2}}}, nil, eval.ErrDuplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := eval.Evaluate(q, tt.run, tt.metrics...); !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
		})
	}
}

func TestParseMetricNames(t *testing.T) {
	for _, name := range append(eval.DefaultMetrics(), "recip_rank") {
		m, err := eval.ParseMetric(name)
		if err != nil || m.String() != name {
			t.Errorf("ParseMetric(%q) = %v, %v", name, m, err)
		}
	}
	m, err := eval.ParseMetric("recip_rank_10")
	if err != nil || m.String() != "mrr_10" {
		t.Errorf("recip_rank_10 parses to %v, %v; want mrr_10", m, err)
	}
}

func TestOracle(t *testing.T) {
	a := eval.Results{Metrics: []string{"m"}, PerQuery: map[string]map[string]float64{"q1": {"m": 0.5}, "q2": {"m": 0}}}
	b := eval.Results{Metrics: []string{"m"}, PerQuery: map[string]map[string]float64{"q1": {"m": 0.5}, "q2": {"m": 1}}}
	o, err := eval.Oracle([]string{"a", "b"}, []eval.Results{a, b})
	if err != nil {
		t.Fatal(err)
	}
	// q1 ties: the first configuration wins; q2: b.
	if o.Mean["m"] != 0.75 || o.Best["q1"]["m"] != 0 || o.Best["q2"]["m"] != 1 {
		t.Errorf("oracle mean %v, best %v", o.Mean, o.Best)
	}
	c := eval.Results{Metrics: []string{"m"}, PerQuery: map[string]map[string]float64{"q1": {"m": 1}, "q3": {"m": 1}}}
	if _, err := eval.Oracle([]string{"a", "c"}, []eval.Results{a, c}); !errors.Is(err, eval.ErrMismatch) {
		t.Errorf("different queries: error %v, want ErrMismatch", err)
	}
	d := eval.Results{Metrics: []string{"n"}, PerQuery: maps.Clone(a.PerQuery)}
	if _, err := eval.Oracle([]string{"a", "d"}, []eval.Results{a, d}); !errors.Is(err, eval.ErrMismatch) {
		t.Errorf("different metrics: error %v, want ErrMismatch", err)
	}
}

// TestKindTable: every family of the table parses back from its name and
// has a label; MTEB names are those of mteb's make_score_dict.
func TestKindTable(t *testing.T) {
	for k := eval.NDCGCut; k <= eval.RecipRank; k++ {
		m := eval.Metric{Family: k, K: 10}
		if k == eval.RecipRank {
			m.K = 0
		}
		if got, err := eval.ParseMetric(m.String()); err != nil || got != m {
			t.Errorf("%v: %q parses as %+v, %v", k, m.String(), got, err)
		}
		if k.Label() == "" {
			t.Errorf("%v has no label", k)
		}
	}
	if eval.NDCGCut.Label() != "nDCG" || eval.Recall.Label() != "recall" || eval.CDR.MTEBName() != "hit_rate_at_" || eval.RecipRank.MTEBName() != "" {
		t.Errorf("labels %q %q, MTEB names %q %q", eval.NDCGCut.Label(), eval.Recall.Label(), eval.CDR.MTEBName(), eval.RecipRank.MTEBName())
	}
}
