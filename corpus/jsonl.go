package corpus

import (
	"bytes"
	"context"
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
	sc    scanner
	keys  [3]string // id, title, text keys
	vals  [3]jsonField
	fixed []byte
	done  error
}

// records is the builder that turns the reader's records into documents.
func (r *jsonlReader) records() *builder { return r.b }

var jsonlFormat = format{
	name: FormatJSONL, exts: []string{".jsonl", ".json", ".ndjson"}, gzip: true,
	open:  func(path string, _ Format, opts Options) (Reader, error) { return reader(openJSONL(path, opts)) },
	units: jsonlUnits,
}

// jsonlUnits counts the blocks of Options.BlockLines lines of a JSONL file,
// reading it through.
func jsonlUnits(path string, opts Options) (int, error) {
	lr, err := openLines(path, opts.MaxDocBytes)
	if err != nil {
		return 0, err
	}
	defer lr.close()
	for {
		if _, err := lr.next(); err == io.EOF {
			break
		} else if err != nil {
			return 0, err
		}
	}
	return int((lr.line + int64(opts.BlockLines) - 1) / int64(opts.BlockLines)), nil
}

func openJSONL(path string, opts Options) (*jsonlReader, error) {
	lr, err := openLines(path, opts.MaxDocBytes)
	if err != nil {
		return nil, err
	}
	where := func(p pos) string { return "line " + strconv.FormatInt(p.row, 10) }
	return &jsonlReader{lr: lr, b: newBuilder(path, opts, where), opts: opts, keys: [3]string{opts.IDColumn, opts.TitleColumn, opts.TextColumn}}, nil
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

// record decodes one line. Invalid UTF-8 is replaced (and counted) before
// decoding, so that strings come out as encoding/json would make them.
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
	if err := r.sc.scanObject(line, &r.keys, &r.vals); err != nil {
		r.b.stats.Rows++
		return r.b.errAt(p, "", fmt.Errorf("not a JSON object: %v: %w", err, ErrRecord))
	}
	id, err := jsonID(r.vals[0])
	if err != nil {
		r.b.stats.Rows++
		return r.b.errAt(p, "", fmt.Errorf("key %q: %v: %w", r.keys[0], err, ErrRecord))
	}
	var text [2]string
	for k := 1; k < 3; k++ {
		if text[k-1], err = jsonString(r.vals[k]); err != nil {
			r.b.stats.Rows++
			return r.b.errAt(p, id, fmt.Errorf("key %q: %v: %w", r.keys[k], err, ErrRecord))
		}
	}
	return r.b.add(p, id, text[0], text[1])
}

// jsonString returns a string value; a missing key or null is "".
func jsonString(f jsonField) (string, error) {
	if f.isStr || !f.present || f.null {
		return f.str, nil
	}
	return "", fmt.Errorf("want a string, got %s", f.num)
}

// jsonID returns an id: a string, or an integer written as a number.
func jsonID(f jsonField) (string, error) {
	if f.present && !f.isStr && !f.null {
		if _, err := strconv.ParseInt(f.num, 10, 64); err != nil {
			return "", fmt.Errorf("want a string or an integer id, got %s", f.num)
		}
		return f.num, nil
	}
	return f.str, nil
}

// inputs is the file, once read to its end.
func (r *jsonlReader) inputs() []Input {
	if in, ok := r.lr.hf.input(r.lr.path); ok {
		in.Shared = r.opts.Shard.active()
		return []Input{in}
	}
	return nil
}

func (r *jsonlReader) Close() error {
	r.done = fmt.Errorf("corpus: %s: %w", r.b.file, ErrClosed)
	return r.lr.close()
}

func (r *jsonlReader) Stats() Stats {
	st := r.b.stats
	st.InputBytes, st.InputSize = r.lr.read()
	return st
}
