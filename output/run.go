package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/msrag/msrag"
	"github.com/msrag/msrag/corpus"
	"github.com/msrag/msrag/internal/parquetio"
)

// RunFormat is a format of search results.
type RunFormat int

const (
	// TREC is trec_eval's run format: "qid Q0 docid rank score tag" per hit.
	TREC RunFormat = iota
	// JSONL is one line per query: {"query_id", "hits": [{"doc_id", "rank",
	// "score", "evidence": [{"channel", "window", "full", "chunk_rank",
	// "chunk_score", "start", "end", "terms", "text"}]}]}, ranks from 1, byte
	// spans into the document's title + " " + text; "full" marks the full
	// window, "terms" the query terms a lexical chunk holds, "text" the
	// chunk's text (RunWriter.Texts).
	JSONL
	// Parquet is one row per hit: query_id, doc_id, rank, score, and the
	// evidence as JSON text.
	Parquet
)

var runFormats = []string{"trec", "jsonl", "parquet"}

func (f RunFormat) String() string { return runFormats[f] }

// ParseRunFormat parses "trec", "jsonl" or "parquet".
func ParseRunFormat(s string) (RunFormat, error) {
	for i, n := range runFormats {
		if s == n {
			return RunFormat(i), nil
		}
	}
	return 0, fmt.Errorf("output: format %q: want trec, jsonl or parquet", s)
}

// RunWriter writes search results, query by query. Parquet output is held
// until Close.
type RunWriter struct {
	// Texts, when set, holds each document's text as its spans count
	// (corpus.Doc.Full) by id: the JSONL and Parquet evidence then carry
	// each chunk's text ("text").
	Texts map[string]string

	f   RunFormat
	w   io.Writer
	tag string
	pq  *array.RecordBuilder
	buf []byte
}

// NewRunWriter writes results in format f to w; tag is the TREC run tag.
func NewRunWriter(w io.Writer, f RunFormat, tag string) *RunWriter {
	rw := &RunWriter{f: f, w: w, tag: tag}
	if f == Parquet {
		rw.pq = array.NewRecordBuilder(memory.DefaultAllocator, runSchema)
	}
	return rw
}

// ErrBadRun is wrapped by Write's error for what a run cannot hold: an id
// with white space or a control character (corpus.CheckID), a TREC tag of
// the same, a score that is not a finite number.
var ErrBadRun = errors.New("output: cannot write the run")

// check fails unless the query's line(s) can be written and read back the
// same: every id and the tag as corpus.CheckID requires, finite scores.
func (rw *RunWriter) check(queryID string, hits []msrag.Hit) error {
	if err := corpus.CheckID(queryID); err != nil {
		return fmt.Errorf("%w: query: %w", ErrBadRun, err)
	}
	if rw.f == TREC {
		if err := corpus.CheckID(rw.tag); err != nil {
			return fmt.Errorf("%w: the run tag: %w", ErrBadRun, err)
		}
	}
	for _, h := range hits {
		if err := corpus.CheckID(h.DocID); err != nil {
			return fmt.Errorf("%w: query %q, rank %d: document %w", ErrBadRun, queryID, h.Rank, err)
		}
		if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) {
			return fmt.Errorf("%w: query %q, document %q: score %v", ErrBadRun, queryID, h.DocID, h.Score)
		}
	}
	return nil
}

// Write writes one query's hits; it writes nothing and fails (wrapping
// ErrBadRun) when an id, the tag or a score cannot be written faithfully.
func (rw *RunWriter) Write(queryID string, hits []msrag.Hit) error {
	if err := rw.check(queryID, hits); err != nil {
		return err
	}
	switch rw.f {
	case TREC:
		return rw.writeTREC(queryID, hits)
	case JSONL:
		return rw.writeJSONL(queryID, hits)
	}
	for _, h := range hits {
		ev, err := json.Marshal(evidenceOf(h, rw.Texts))
		if err != nil {
			return err
		}
		rw.pq.Field(0).(*array.StringBuilder).Append(queryID)
		rw.pq.Field(1).(*array.StringBuilder).Append(h.DocID)
		rw.pq.Field(2).(*array.Int32Builder).Append(int32(h.Rank))
		rw.pq.Field(3).(*array.Float64Builder).Append(h.Score)
		rw.pq.Field(4).(*array.StringBuilder).Append(string(ev))
	}
	return nil
}

func (rw *RunWriter) writeTREC(queryID string, hits []msrag.Hit) error {
	b := rw.buf[:0]
	for _, h := range hits {
		b = append(b, queryID...)
		b = append(b, " Q0 "...)
		b = append(b, h.DocID...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(h.Rank), 10)
		b = append(b, ' ')
		b = strconv.AppendFloat(b, h.Score, 'g', -1, 64)
		b = append(b, ' ')
		b = append(b, rw.tag...)
		b = append(b, '\n')
	}
	rw.buf = b
	_, err := rw.w.Write(b)
	return err
}

type jsonEvidence struct {
	Window     int     `json:"window"`
	Full       bool    `json:"full,omitempty"`
	ChunkRank  int     `json:"chunk_rank"`
	ChunkScore float32 `json:"chunk_score"`
	Start      int64   `json:"start"`
	End        int64   `json:"end"`
	// Channel is the chunk's channel, as its kind names it ("w100",
	// "full", "bm25-w100", "bm25-doc"): every kind's evidence has it. Terms
	// are what explains the chunk (the query terms it holds).
	Channel string   `json:"channel,omitempty"`
	Terms   []string `json:"terms,omitempty"`
	// Text is the chunk's text, when the writer has the documents' texts.
	Text string `json:"text,omitempty"`
}

type jsonHit struct {
	DocID    string         `json:"doc_id"`
	Rank     int            `json:"rank"`
	Score    float64        `json:"score"`
	Evidence []jsonEvidence `json:"evidence"`
}

// evidenceOf is h's evidence in the JSON form; texts, when set, give each
// chunk's text.
func evidenceOf(h msrag.Hit, texts map[string]string) []jsonEvidence {
	ev := make([]jsonEvidence, len(h.Evidence))
	for i, e := range h.Evidence {
		ev[i] = jsonEvidence{Window: e.Window.Size, Full: e.Window.Truncate, ChunkRank: e.ChunkRank, ChunkScore: e.ChunkScore, Start: e.Start, End: e.End,
			Channel: e.Channel.Name(), Terms: e.Terms}
		if t, ok := texts[h.DocID]; ok && e.Start >= 0 && e.Start <= e.End && e.End <= int64(len(t)) {
			ev[i].Text = t[e.Start:e.End]
		}
	}
	return ev
}

func (rw *RunWriter) writeJSONL(queryID string, hits []msrag.Hit) error {
	line := struct {
		QueryID string    `json:"query_id"`
		Hits    []jsonHit `json:"hits"`
	}{QueryID: queryID, Hits: make([]jsonHit, len(hits))}
	for i, h := range hits {
		line.Hits[i] = jsonHit{DocID: h.DocID, Rank: h.Rank, Score: h.Score, Evidence: evidenceOf(h, rw.Texts)}
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = rw.w.Write(append(b, '\n'))
	return err
}

var runSchema = arrow.NewSchema([]arrow.Field{
	{Name: "query_id", Type: arrow.BinaryTypes.String},
	{Name: "doc_id", Type: arrow.BinaryTypes.String},
	{Name: "rank", Type: arrow.PrimitiveTypes.Int32},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64},
	{Name: "evidence", Type: arrow.BinaryTypes.String},
}, nil)

// Close writes what is held (Parquet); it does not close the writer.
func (rw *RunWriter) Close() error {
	if rw.pq == nil {
		return nil
	}
	defer rw.pq.Release()
	rec := rw.pq.NewRecordBatch()
	defer rec.Release()
	n := int(rec.NumRows())
	return parquetio.WriteTable(rw.w, runSchema, n, func(lo, hi int) arrow.RecordBatch {
		if lo == 0 && hi == n {
			rec.Retain()
			return rec
		}
		return rec.NewSlice(int64(lo), int64(hi))
	})
}
