package edgelist

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrSyntax is returned for a line or token that does not parse.
	ErrSyntax = errors.New("edgelist: syntax error")
	// ErrRange is returned for an id outside the declared vertex range, a
	// negative id, an id above 2^64−1, or a vertex count that does not fit
	// 32-bit vertex ids.
	ErrRange = errors.New("edgelist: id out of range")
	// ErrCount is returned when a file holds fewer or more entries than its
	// header declares.
	ErrCount = errors.New("edgelist: entry count does not match the header")
	// ErrNoVertices is returned for an input that yields no vertex at all.
	ErrNoVertices = errors.New("edgelist: no vertices")
	// ErrUnsupported is returned for a format variant this package does not
	// read, such as a MatrixMarket array file.
	ErrUnsupported = errors.New("edgelist: unsupported input")
)

// ParseError reports a problem at one line of an input. Use errors.Is on it
// to test for the sentinel it wraps.
type ParseError struct {
	// Name is the input's name (usually its path), or "".
	Name string
	// Line is the 1-based line number, or 0 when the problem concerns the
	// whole input (for example a missing header).
	Line int64
	// Detail says what was found, for example `got "1 x"`.
	Detail string
	// Err is the sentinel error or the underlying I/O error.
	Err error
}

func (e *ParseError) Error() string {
	var b []byte
	b = append(b, "edgelist: "...)
	if e.Name != "" {
		b = append(b, e.Name...)
		b = append(b, ": "...)
	}
	if e.Line > 0 {
		b = fmt.Appendf(b, "line %d: ", e.Line)
	}
	msg, _ := strings.CutPrefix(e.Err.Error(), "edgelist: ")
	b = append(b, msg...)
	if e.Detail != "" {
		b = append(b, " ("...)
		b = append(b, e.Detail...)
		b = append(b, ')')
	}
	return string(b)
}

func (e *ParseError) Unwrap() error { return e.Err }
