package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// jsonlReader reads one JSON object per line (BEIR's corpus.jsonl[.gz]).
type jsonlReader struct {
	lr    *lineReader
	b     *builder
	opts  Options
	obj   map[string]json.RawMessage
	fixed []byte
	done  error
}

func openJSONL(path string, opts Options) (*jsonlReader, error) {
	lr, err := openLines(path)
	if err != nil {
		return nil, err
	}
	where := func(p pos) string { return "line " + strconv.FormatInt(p.row, 10) }
	return &jsonlReader{lr: lr, b: newBuilder(path, opts, where), opts: opts, obj: make(map[string]json.RawMessage, 4)}, nil
}

func (r *jsonlReader) Next(ctx context.Context) ([]Doc, error) {
	if r.done != nil {
		return nil, r.done
	}
	for !r.b.full() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := r.lr.next()
		if err == io.EOF {
			r.done = r.b.eof()
			break
		}
		if err != nil {
			r.done = err
			return nil, err
		}
		n := r.lr.line
		unit := int((n - 1) / int64(r.opts.BlockLines))
		if (n-1)%int64(r.opts.BlockLines) == 0 && r.opts.Shard.has(unit) {
			r.b.stats.Units++
		}
		if !r.opts.Shard.has(unit) {
			continue
		}
		if err := r.record(pos{unit, n}, line); err != nil {
			r.done = err
			return nil, err
		}
	}
	if len(r.b.out) == 0 {
		return nil, r.done
	}
	return r.b.take(), nil
}

// record decodes one line. Invalid UTF-8 is replaced before decoding, since
// encoding/json would replace it silently and it must be counted.
func (r *jsonlReader) record(p pos, line []byte) error {
	if len(bytes.TrimSpace(line)) == 0 {
		r.b.stats.Rows++
		return r.b.errAt(p, "", fmt.Errorf("empty line: %w", ErrRecord))
	}
	if !utf8.Valid(line) {
		r.fixed = append(r.fixed[:0], bytes.ToValidUTF8(line, []byte("\uFFFD"))...)
		line = r.fixed
		r.b.stats.InvalidUTF8++
	}
	clear(r.obj)
	if err := json.Unmarshal(line, &r.obj); err != nil {
		r.b.stats.Rows++
		return r.b.errAt(p, "", fmt.Errorf("not a JSON object: %v: %w", err, ErrRecord))
	}
	id, err := jsonID(r.obj[r.opts.IDColumn])
	if err != nil {
		r.b.stats.Rows++
		return r.b.errAt(p, "", fmt.Errorf("key %q: %v: %w", r.opts.IDColumn, err, ErrRecord))
	}
	title, err := jsonString(r.obj[r.opts.TitleColumn])
	if err != nil {
		r.b.stats.Rows++
		return r.b.errAt(p, id, fmt.Errorf("key %q: %v: %w", r.opts.TitleColumn, err, ErrRecord))
	}
	text, err := jsonString(r.obj[r.opts.TextColumn])
	if err != nil {
		r.b.stats.Rows++
		return r.b.errAt(p, id, fmt.Errorf("key %q: %v: %w", r.opts.TextColumn, err, ErrRecord))
	}
	return r.b.add(p, id, title, text)
}

// jsonString decodes a JSON string; a missing key or null is "".
func jsonString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("want a string, got %.40s", raw)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// jsonID decodes an id: a string, or an integer written as a number.
func jsonID(raw json.RawMessage) (string, error) {
	if len(raw) > 0 && raw[0] != '"' && string(raw) != "null" {
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return "", fmt.Errorf("want a string or an integer id, got %.40s", raw)
		}
		return string(raw), nil
	}
	return jsonString(raw)
}

func (r *jsonlReader) Close() error {
	r.done = fmt.Errorf("corpus: %s: %w", r.b.file, ErrClosed)
	return r.lr.close()
}

func (r *jsonlReader) Stats() Stats { return r.b.stats }
