package eval

import (
	"errors"
	"fmt"
)

// Sentinel errors, wrapped by the errors this package returns; test with errors.Is.
var (
	// ErrSyntax marks a line of a run or qrels file that cannot be parsed.
	ErrSyntax = errors.New("eval: syntax error")
	// ErrDuplicate marks a document listed twice for one query.
	ErrDuplicate = errors.New("eval: duplicate document")
	// ErrMetric marks a metric name that is not known.
	ErrMetric = errors.New("eval: unknown metric")
	// ErrScore marks a score that is not a number.
	ErrScore = errors.New("eval: invalid score")
	// ErrID marks an id that cannot be written: empty or with white space.
	ErrID = errors.New("eval: invalid id")
	// ErrMismatch marks results that cannot be combined.
	ErrMismatch = errors.New("eval: results do not match")
)

// ParseError reports where a run or qrels file went wrong.
type ParseError struct {
	File string // name given to the reader
	Line int    // 1-based line number
	Err  error  // wraps ErrSyntax, ErrDuplicate or ErrScore
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("eval: %s:%d: %v", e.File, e.Line, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }
