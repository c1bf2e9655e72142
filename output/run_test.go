package output_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/output"
)

func hits(docs ...string) []msrag.Hit {
	out := make([]msrag.Hit, len(docs))
	for i, d := range docs {
		out[i] = msrag.Hit{DocID: d, Rank: i + 1, Score: 1 / float64(i+1)}
	}
	return out
}

// TestWriteRefusesBadIDs: an id or tag that would split or shift a TREC line
// is refused by every format, and nothing is written.
func TestWriteRefusesBadIDs(t *testing.T) {
	for _, tc := range []struct {
		name, qid, doc, tag string
		score               float64
		want                string
	}{
		{"newline in a document id", "q1", "d\n1", "msrag", 1, `document id "d\n1" holds U+000A`},
		{"space in a document id", "q1", "d 1", "msrag", 1, "U+0020"},
		{"tab in a query id", "q\t1", "d1", "msrag", 1, `query: id "q\t1" holds U+0009`},
		{"CR in a query id", "q\r", "d1", "msrag", 1, "U+000D"},
		{"NUL in a document id", "q1", "d\x00", "msrag", 1, "U+0000"},
		{"empty query id", "", "d1", "msrag", 1, "empty id"},
		{"NaN score", "q1", "d1", "msrag", math.NaN(), "score NaN"},
		{"tag with a space", "q1", "d1", "my run", 1, "the run tag"},
	} {
		for _, f := range []output.RunFormat{output.TREC, output.JSONL, output.Parquet} {
			if f != output.TREC && strings.Contains(tc.want, "tag") {
				continue
			}
			var b bytes.Buffer
			rw := output.NewRunWriter(&b, f, tc.tag)
			h := hits(tc.doc)
			h[0].Score = tc.score
			err := rw.Write(tc.qid, h)
			if !errors.Is(err, output.ErrBadRun) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s, %s: %v, want ErrBadRun with %q", tc.name, f, err, tc.want)
			}
			if b.Len() != 0 {
				t.Errorf("%s, %s: wrote %q", tc.name, f, b.String())
			}
		}
	}
}

// FuzzTRECWriter: what the TREC writer writes parses back, line by line, to
// the same six columns, or it fails and writes nothing.
func FuzzTRECWriter(f *testing.F) {
	f.Add("q1", "d1", "d2", "msrag", 0.5)
	f.Add("q 1", "d1", "d2", "msrag", 0.5)
	f.Add("q1", "d\n1", "d2", "msrag", 1e300)
	f.Add("q1", "d1", "d\u00a02", "run\t1", -0.0)
	f.Add("q\u2028", "d1", "d2", "msrag", math.Inf(1))
	f.Fuzz(func(t *testing.T, qid, d1, d2, tag string, score float64) {
		var b bytes.Buffer
		rw := output.NewRunWriter(&b, output.TREC, tag)
		h := hits(d1, d2)
		h[0].Score = score
		if err := rw.Write(qid, h); err != nil {
			if b.Len() != 0 {
				t.Fatalf("failed (%v) but wrote %q", err, b.String())
			}
			return
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != len(h) {
			t.Fatalf("%d hits written as %d lines: %q", len(h), len(lines), b.String())
		}
		for i, l := range lines {
			c := strings.Fields(l)
			if len(c) != 6 || c[0] != qid || c[1] != "Q0" || c[2] != h[i].DocID || c[3] != strconv.Itoa(h[i].Rank) || c[5] != tag {
				t.Fatalf("line %q does not read back as %q Q0 %q %d score %q", l, qid, h[i].DocID, h[i].Rank, tag)
			}
			if s, err := strconv.ParseFloat(c[4], 64); err != nil || s != h[i].Score {
				t.Fatalf("score %q reads back as %v (%v), want %v", c[4], s, err, h[i].Score)
			}
		}
	})
}

// FuzzJSONLWriter: what the JSONL writer writes is one line per query that
// decodes to the same query id, document ids, ranks and scores, or it fails
// and writes nothing.
func FuzzJSONLWriter(f *testing.F) {
	f.Add("q1", "d1", "d2", 0.5)
	f.Add("q\n1", "d1", "d2", 0.5)
	f.Add("q1", "d\"1", "d\\2", 1e-300)
	f.Add("q1", "\xff", "d2", 0.0)
	f.Fuzz(func(t *testing.T, qid, d1, d2 string, score float64) {
		var b bytes.Buffer
		rw := output.NewRunWriter(&b, output.JSONL, "msrag")
		h := hits(d1, d2)
		h[0].Score = score
		if err := rw.Write(qid, h); err != nil {
			if b.Len() != 0 {
				t.Fatalf("failed (%v) but wrote %q", err, b.String())
			}
			return
		}
		if bytes.Count(b.Bytes(), []byte("\n")) != 1 || !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
			t.Fatalf("not one line: %q", b.String())
		}
		var got struct {
			QueryID string `json:"query_id"`
			Hits    []struct {
				DocID string  `json:"doc_id"`
				Rank  int     `json:"rank"`
				Score float64 `json:"score"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%q: %v", b.String(), err)
		}
		if got.QueryID != qid || len(got.Hits) != len(h) {
			t.Fatalf("read back %+v, want query %q with %d hits", got, qid, len(h))
		}
		for i, g := range got.Hits {
			if g.DocID != h[i].DocID || g.Rank != h[i].Rank || g.Score != h[i].Score {
				t.Fatalf("hit %d read back as %+v, want %+v", i, g, h[i])
			}
		}
	})
}
