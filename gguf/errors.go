package gguf

import (
	"errors"
	"fmt"
)

// The sentinels. Every error about a file matches exactly one with errors.Is:
// ErrIO (it cannot be read or written) or ErrFormat (it breaks a rule of the
// format, or is a GGUF this package does not read: a big-endian or v1 file, a
// tensor type ggml removed; as for an .mlb file, a version or type the reader
// does not know is a format error). They are the loader codes ML_E_IO and
// ML_E_FORMAT; ML_E_SHAPE has no GGUF counterpart (the reader checks no
// model dimensions).
var (
	ErrIO     = errors.New("gguf: input/output error")
	ErrFormat = errors.New("gguf: invalid file")
)

// Error describes an invalid or unreadable GGUF file.
type Error struct {
	Kind   error  // ErrIO or ErrFormat
	Path   string // the file, when known
	Offset int64  // byte offset of the field concerned, or -1
	Key    string // the metadata key concerned, or ""
	Tensor string // the tensor concerned, or ""
	Msg    string // the rule broken
	Err    error  // the underlying cause, or nil
}

// Code returns the loader code inspect prints, as the other readers do:
// ML_E_IO or ML_E_FORMAT.
func (e *Error) Code() string {
	if e.Kind == ErrIO {
		return "ML_E_IO"
	}
	return "ML_E_FORMAT"
}

func (e *Error) Error() string {
	s := "gguf: "
	if e.Path != "" {
		s += e.Path + ": "
	}
	if e.Key != "" {
		s += fmt.Sprintf("key %q: ", e.Key)
	}
	if e.Tensor != "" {
		s += fmt.Sprintf("tensor %q: ", e.Tensor)
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

// Is matches the sentinel of e's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

func (e *Error) Unwrap() error { return e.Err }

func formatErr(off int64, format string, args ...any) *Error {
	return &Error{Kind: ErrFormat, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func ioErr(path, msg string, err error) *Error {
	return &Error{Kind: ErrIO, Path: path, Offset: -1, Msg: msg, Err: err}
}

// withPath sets the path of a package error.
func withPath(err error, path string) error {
	var e *Error
	if errors.As(err, &e) && e.Path == "" {
		e.Path = path
	}
	return err
}
