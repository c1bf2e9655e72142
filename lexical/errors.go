package lexical

import "errors"

var (
	// ErrAnalyzer is wrapped by the error for an unknown analyzer name,
	// or a known one of another version ([ParseIdentity]).
	ErrAnalyzer = errors.New("unknown analyzer")
	// ErrCorrupt is wrapped by every error of [Read] about the bytes it
	// read: a truncated, damaged or foreign file.
	ErrCorrupt = errors.New("corrupt lexical index")
	// ErrRow is wrapped by the error of [Builder.Add] for a row out of order.
	ErrRow = errors.New("row out of order")
	// ErrStats is wrapped by the error of a search whose statistics cannot
	// be those of a collection holding the index (fewer documents or
	// tokens than the index, a missing or too small document frequency).
	ErrStats = errors.New("inconsistent statistics")
)
