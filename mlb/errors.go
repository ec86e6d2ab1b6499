package mlb

import (
	"errors"
	"fmt"
)

// Code is one of the loader status codes of SPEC.md's validation table.
type Code int

const (
	CodeIO     Code = 1 // ML_E_IO: the file cannot be opened or read
	CodeFormat Code = 2 // ML_E_FORMAT: bad magic, version, field value, flags or size
	CodeShape  Code = 3 // ML_E_SHAPE: a bad dimension
)

// String returns the code's SPEC.md name, e.g. "ML_E_SHAPE".
func (c Code) String() string {
	switch c {
	case CodeIO:
		return "ML_E_IO"
	case CodeFormat:
		return "ML_E_FORMAT"
	case CodeShape:
		return "ML_E_SHAPE"
	}
	return fmt.Sprintf("ML_E_%d", int(c))
}

// The sentinels: every error about a file (reading it, its format, its shapes)
// satisfies errors.Is with exactly one of them. Misusing a Writer (writing after
// Close or Abort) is a plain error.
var (
	ErrIO     error = &Error{Code: CodeIO, Msg: "input/output error", Offset: -1}
	ErrFormat error = &Error{Code: CodeFormat, Msg: "invalid file format", Offset: -1}
	ErrShape  error = &Error{Code: CodeShape, Msg: "invalid shape", Offset: -1}
)

// Error describes an invalid or unreadable .mlb file. Its text starts with the code,
// e.g. `ML_E_SHAPE: n_heads 12 does not divide dim 1000`.
type Error struct {
	Code   Code
	Path   string // the file, when known
	Offset int64  // byte offset of the field or array concerned, or -1
	Tensor string // the tensor or array concerned, or ""
	Msg    string // what rule is broken, naming the field
	Err    error  // the underlying cause (an os error), or nil
}

func (e *Error) Error() string {
	s := e.Code.String() + ": "
	if e.Path != "" {
		s += e.Path + ": "
	}
	if e.Tensor != "" {
		s += "tensor " + e.Tensor + ": "
	}
	s += e.Msg
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (at offset %#x)", e.Offset)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is the sentinel of e's code (ErrIO, ErrFormat or
// ErrShape) or e itself, so errors.Is(err, mlb.ErrShape) works; another
// *Error of the same code does not match.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t == ErrIO || t == ErrFormat || t == ErrShape || t == e)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of err, or 0 when err is not from this package.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func formatErr(off int64, format string, args ...any) *Error {
	return &Error{Code: CodeFormat, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func shapeErr(off int64, format string, args ...any) *Error {
	return &Error{Code: CodeShape, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func ioErr(path string, err error) *Error {
	return &Error{Code: CodeIO, Path: path, Offset: -1, Msg: "cannot read file", Err: err}
}

func writeErr(path string, err error) *Error {
	return &Error{Code: CodeIO, Path: path, Offset: -1, Msg: "cannot write file", Err: err}
}
