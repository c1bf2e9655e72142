package corpus

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// recSource yields the Arrow records of the selected units of a file.
type recSource interface {
	// next returns the next record, which the caller releases, with its
	// unit and the row of its first record within the unit; io.EOF at end.
	next(ctx context.Context) (rec arrow.RecordBatch, unit int, row0 int64, err error)
	close() error
}

// arrowReader turns the records of a recSource into documents. It is shared
// by the Parquet and Arrow IPC readers.
type arrowReader struct {
	src     recSource
	b       *builder
	rec     arrow.RecordBatch
	unit    int
	row0    int64
	at      int // next row of rec
	get     [3]valueFunc
	done    error
	closed  bool
	started bool
}

// records is the builder that turns the reader's records into documents.
func (r *arrowReader) records() *builder { return r.b }

// valueFunc returns row i of a column as a string that points into the
// record's buffers, and whether it is valid (not null).
type valueFunc func(i int) (string, bool)

func (r *arrowReader) Next(ctx context.Context) ([]Doc, error) {
	if r.done != nil {
		return nil, r.done
	}
	for !r.b.full() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.rec == nil {
			rec, unit, row0, err := r.src.next(ctx)
			if err == io.EOF {
				r.done = r.b.eof()
				break
			}
			if err != nil {
				r.done = err
				return nil, err
			}
			if err := r.bind(rec, unit); err != nil {
				rec.Release()
				r.done = err
				return nil, err
			}
			if !r.started || unit != r.unit {
				r.b.stats.Units++
			}
			r.started = true
			r.rec, r.unit, r.row0, r.at = rec, unit, row0, 0
		}
		if err := r.fill(); err != nil {
			r.done = err
			return nil, err
		}
	}
	if len(r.b.out) == 0 {
		return nil, r.done
	}
	return r.b.take(), nil
}

// bind looks up the id, title and text columns of rec by name.
func (r *arrowReader) bind(rec arrow.RecordBatch, unit int) error {
	o := r.b.opts
	for k, name := range [3]string{o.IDColumn, o.TitleColumn, o.TextColumn} {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			if k == 1 {
				r.get[k] = nil
				continue
			}
			return fmt.Errorf("corpus: %s unit %d: no column %q: %w", r.b.file, unit, name, ErrColumn)
		}
		get, err := stringColumn(rec.Column(idx[0]), k == 0)
		if err != nil {
			return fmt.Errorf("corpus: %s: column %q: %v: %w", r.b.file, name, err, ErrColumn)
		}
		r.get[k] = get
	}
	return nil
}

// fill adds rows of the current record until the batch is full or the
// record is used up, then releases it.
func (r *arrowReader) fill() error {
	n := int(r.rec.NumRows())
	for ; r.at < n && !r.b.full(); r.at++ {
		p := pos{r.unit, r.row0 + int64(r.at)}
		id, ok := r.get[0](r.at)
		if !ok {
			r.b.stats.Rows++
			return r.b.errAt(p, "", fmt.Errorf("null id: %w", ErrRecord))
		}
		text, ok := r.get[2](r.at)
		if !ok || strings.TrimSpace(text) == "" {
			if err := r.b.add(p, strings.Clone(id), "", ""); err != nil {
				return err
			}
			continue
		}
		var title string
		if r.get[1] != nil {
			title, _ = r.get[1](r.at)
		}
		if err := r.b.add(p, strings.Clone(id), strings.Clone(title), strings.Clone(text)); err != nil {
			return err
		}
	}
	if r.at >= n {
		r.rec.Release()
		r.rec = nil
	}
	return nil
}

func (r *arrowReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.done = fmt.Errorf("corpus: %s: %w", r.b.file, ErrClosed)
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	return r.src.close()
}

func (r *arrowReader) Stats() Stats { return r.b.stats }

// stringColumn returns a valueFunc for a text column; for an id column,
// integers are accepted too and formatted in decimal.
func stringColumn(col arrow.Array, id bool) (valueFunc, error) {
	switch a := col.(type) {
	case *array.String:
		return func(i int) (string, bool) { return a.Value(i), a.IsValid(i) }, nil
	case *array.LargeString:
		return func(i int) (string, bool) { return a.Value(i), a.IsValid(i) }, nil
	case *array.StringView:
		return func(i int) (string, bool) { return a.Value(i), a.IsValid(i) }, nil
	case *array.Binary:
		return func(i int) (string, bool) { return a.ValueString(i), a.IsValid(i) }, nil
	case *array.LargeBinary:
		return func(i int) (string, bool) { return a.ValueString(i), a.IsValid(i) }, nil
	}
	if id {
		switch a := col.(type) {
		case *array.Int64:
			return intColumn(a, a.Value), nil
		case *array.Int32:
			return intColumn(a, a.Value), nil
		case *array.Uint64:
			return func(i int) (string, bool) { return strconv.FormatUint(a.Value(i), 10), a.IsValid(i) }, nil
		case *array.Uint32:
			return intColumn(a, a.Value), nil
		}
		return nil, fmt.Errorf("type %s, want a string or an integer", col.DataType())
	}
	return nil, fmt.Errorf("type %s, want a string", col.DataType())
}

func intColumn[T int32 | int64 | uint32](a arrow.Array, value func(int) T) valueFunc {
	return func(i int) (string, bool) { return strconv.FormatInt(int64(value(i)), 10), a.IsValid(i) }
}

// checkSchema checks, before any data is read, that the id and text
// columns exist with a usable type.
func checkSchema(file string, sc *arrow.Schema, o Options) error {
	for k, name := range [3]string{o.IDColumn, o.TitleColumn, o.TextColumn} {
		idx := sc.FieldIndices(name)
		if len(idx) == 0 {
			if k == 1 {
				continue
			}
			have := make([]string, 0, sc.NumFields())
			for _, f := range sc.Fields() {
				have = append(have, strconv.Quote(f.Name))
			}
			return fmt.Errorf("corpus: %s: no column %q (columns: %s): %w", file, name, strings.Join(have, ", "), ErrColumn)
		}
		t := sc.Field(idx[0]).Type
		ok := false
		switch t.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY:
			ok = true
		case arrow.INT32, arrow.INT64, arrow.UINT32, arrow.UINT64:
			ok = k == 0
		}
		if !ok {
			want := "a string"
			if k == 0 {
				want = "a string or an integer"
			}
			return fmt.Errorf("corpus: %s: column %q has type %s, want %s: %w", file, name, t, want, ErrColumn)
		}
	}
	return nil
}
