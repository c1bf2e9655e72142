package hub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/msrag/msrag/internal/safefile"
)

// qrelsJSONLToTSV rewrites qrels kept as JSONL, one
// {"query-id": ..., "corpus-id": ..., "score": ...} object per line (ids and
// score as strings or numbers, the score an integer), as the TSV that
// corpus.ReadQrels reads: a "query-id corpus-id score" header, then one
// judgement per line. It returns the size and sha256 of the TSV.
func qrelsJSONLToTSV(src, dst string) (int64, string, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, "", err
	}
	defer in.Close()
	var n int64
	sum, err := safefile.Write(dst, func(w io.Writer) error {
		cw := &countWriter{w: w}
		err := convertQrels(in, cw)
		n = cw.n
		return err
	})
	if err != nil {
		return 0, "", err
	}
	return n, sum, nil
}

// convertQrels copies the judgements of r (JSONL) to w (TSV).
func convertQrels(r io.Reader, w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("query-id\tcorpus-id\tscore\n")
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		q, d, s, err := qrelFields(sc.Bytes())
		if err != nil {
			return fmt.Errorf("line %d: %w: %w", line, err, ErrLayout)
		}
		fmt.Fprintf(bw, "%s\t%s\t%d\n", q, d, s)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// qrelFields decodes one JSONL judgement.
func qrelFields(line []byte) (query, doc string, score int, err error) {
	var rec struct {
		Query json.RawMessage `json:"query-id"`
		Doc   json.RawMessage `json:"corpus-id"`
		Score json.RawMessage `json:"score"`
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		return "", "", 0, fmt.Errorf("not a JSON object: %v", err)
	}
	if query, err = idText(rec.Query); err != nil {
		return "", "", 0, fmt.Errorf("query-id: %v", err)
	}
	if doc, err = idText(rec.Doc); err != nil {
		return "", "", 0, fmt.Errorf("corpus-id: %v", err)
	}
	text, err := idText(rec.Score)
	if err != nil {
		return "", "", 0, fmt.Errorf("score: %v", err)
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return "", "", 0, fmt.Errorf("score %q is not an integer", text)
	}
	return query, doc, int(f), nil
}

// idText returns a JSON string or number as text; it must be non-empty and
// free of whitespace, which would split the TSV line differently.
func idText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n json.Number
		if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
			return "", fmt.Errorf("missing, or neither a string nor a number")
		}
		s = n.String()
	}
	if s == "" || strings.ContainsAny(s, " \t\n\r\v\f") {
		return "", fmt.Errorf("%q is empty or holds whitespace", s)
	}
	return s, nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

// Write writes p to the underlying writer and counts it.
func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
