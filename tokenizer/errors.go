package tokenizer

import (
	"errors"
	"fmt"
)

// Sentinel errors, usable with errors.Is.
var (
	// ErrUnsupported marks a tokenizer.json that uses a component or setting
	// this package does not implement.
	ErrUnsupported = errors.New("unsupported")
	// ErrInvalid marks a tokenizer.json that is malformed.
	ErrInvalid = errors.New("invalid tokenizer file")
)

// Error is a problem with a tokenizer file at a JSON path such as
// "normalizer.normalizers[1]".
type Error struct {
	File string // file name, empty when loaded from bytes
	Path string // JSON path of the offending component
	Err  error  // wraps ErrUnsupported or ErrInvalid
}

func (e *Error) Error() string {
	prefix := "tokenizer: "
	if e.File != "" {
		prefix += e.File + ": "
	}
	if e.Path != "" {
		prefix += e.Path + ": "
	}
	return prefix + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// detail is a message that unwraps to a sentinel without repeating it.
type detail struct {
	msg  string
	kind error
}

func (d *detail) Error() string { return d.msg }
func (d *detail) Unwrap() error { return d.kind }

// unsupported reports a component or setting at path that is not
// implemented, e.g. `tokenizer: normalizer.normalizers[1]: unsupported type "Foo"`.
func unsupported(path, format string, args ...any) error {
	return &Error{Path: path, Err: &detail{"unsupported " + fmt.Sprintf(format, args...), ErrUnsupported}}
}

func invalid(path, format string, args ...any) error {
	return &Error{Path: path, Err: &detail{fmt.Sprintf(format, args...), ErrInvalid}}
}
