package eval_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/eval"
)

// FuzzReadRun checks that any input either fails cleanly or reads back the
// same after writing: every hit kept, each query's hits in trec_eval order.
func FuzzReadRun(f *testing.F) {
	f.Add([]byte("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.25 tag\n"))
	f.Add([]byte("q Q0 d 1 -0 t\nq Q0 e 1 1e308 t\n\n"))
	f.Add([]byte("q Q0 d 1 0x1p-3 t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := eval.ReadRun(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := eval.WriteRun(&buf, run, "t"); err != nil {
			t.Fatalf("writing what was read: %v", err)
		}
		again, err := eval.ReadRun(&buf, "again")
		if err != nil {
			t.Fatalf("reading what was written: %v\n%s", err, buf.Bytes())
		}
		for _, hits := range run {
			eval.SortHits(hits)
		}
		if !reflect.DeepEqual(normZero(run), normZero(again)) {
			t.Fatalf("round trip changed the run:\n%v\n%v", run, again)
		}
	})
}

// normZero maps -0 to 0: both sort alike and print differently only in sign.
func normZero(r eval.Run) eval.Run {
	for _, hits := range r {
		for i := range hits {
			if hits[i].Score == 0 {
				hits[i].Score = 0
			}
		}
	}
	return r
}

func FuzzReadQrels(f *testing.F) {
	f.Add([]byte("query-id\tcorpus-id\tscore\nq1\td1\t1\n"))
	f.Add([]byte("q1 0 d1 2\nq1 0 d2 -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := corpus.ParseQrels(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		q := eval.Qrels(corpus.Judgements(rows))
		for _, format := range []eval.QrelsFormat{eval.QrelsTSV, eval.QrelsTREC} {
			var buf bytes.Buffer
			if err := eval.WriteQrels(&buf, q, format); err != nil {
				t.Fatalf("writing what was read: %v", err)
			}
			rows, err := corpus.ParseQrels(&buf, "again")
			if err != nil {
				t.Fatalf("reading what was written: %v\n%s", err, buf.Bytes())
			}
			if again := eval.Qrels(corpus.Judgements(rows)); !reflect.DeepEqual(q, again) {
				t.Fatalf("round trip changed the qrels:\n%v\n%v", q, again)
			}
		}
	})
}
