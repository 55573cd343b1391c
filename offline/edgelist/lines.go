package edgelist

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"

	"sketchcc/stream"
)

// maxLineBytes bounds one input line so that a file with no line ends
// cannot make a parser buffer it whole.
const maxLineBytes = 1 << 20

// lineReader yields lines without their line ends and counts them. A line
// ends at LF, CRLF or a lone CR (the old Mac OS convention): CR is never
// part of a line.
type lineReader struct {
	ctx  context.Context // checked before each read of r
	r    io.Reader
	name string
	line int64 // number of the last line returned, 1-based
	err  error // sticky: io.EOF or a *ParseError

	buf      []byte
	pos, end int  // unread bytes are buf[pos:end]
	eof      bool // r has returned io.EOF
	noLF     bool // buf[pos:end] holds no LF (only lone CRs end lines there)
	cr       bool // the last line ended with CR: skip one LF that follows

	// last is where in buf the line the last next returned starts, for
	// back, or -1 when there is no line to return again. Before a line
	// starts cr is false, so pos is all that back restores.
	last int
}

func newLineReader(ctx context.Context, r io.Reader, name string) *lineReader {
	return &lineReader{ctx: ctx, r: r, name: name, buf: make([]byte, 64<<10), last: -1}
}

// next returns the next line, valid until the following call. It returns
// ok = false at the end of input or on error; see failure.
func (l *lineReader) next() (line []byte, ok bool) {
	l.last = -1
	if l.err != nil {
		return nil, false
	}
	for {
		if l.cr && (l.pos < l.end || l.eof) {
			if l.pos < l.end && l.buf[l.pos] == '\n' {
				l.pos++
			}
			l.cr = false
		}
		if !l.cr {
			start := l.pos
			if i := stream.IndexLineEnd(l.buf[l.pos:l.end], &l.noLF); i >= 0 {
				l.last = start
				line = l.buf[start : start+i]
				l.cr = l.buf[start+i] == '\r'
				l.pos = start + i + 1
				l.line++
				return line, true
			}
			if l.eof {
				if l.pos == l.end {
					l.err = io.EOF
					return nil, false
				}
				l.last = start
				line = l.buf[l.pos:l.end] // a last line with no line end
				l.pos = l.end
				l.line++
				return line, true
			}
		}
		if err := l.fill(); err != nil {
			l.err = err
			return nil, false
		}
	}
}

// record returns the next line that is neither a comment nor only
// separators, and its fields split into f's storage; it adds every line
// it reads, skipped ones included, to *lines. ok is false at the end of
// the input (or at an error, which failure reports).
func (l *lineReader) record(lines *int64, f [][]byte) (line []byte, fields [][]byte, ok bool) {
	for {
		if line, ok = l.next(); !ok {
			return nil, f, false
		}
		*lines++
		if isComment(line) {
			continue
		}
		if f = splitFields(line, f); len(f) > 0 { // else only separators, such as ","
			return line, f, true
		}
	}
}

// fill reads more input into buf, moving the unread bytes to its start and
// growing it up to maxLineBytes for a long line.
func (l *lineReader) fill() error {
	if l.pos > 0 {
		l.end = copy(l.buf, l.buf[l.pos:l.end])
		l.pos = 0
	}
	if l.end == len(l.buf) {
		if l.end > maxLineBytes {
			return &ParseError{Name: l.name, Line: l.line + 1, Err: ErrSyntax,
				Detail: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
		}
		l.buf = append(l.buf, make([]byte, min(len(l.buf), maxLineBytes+1-len(l.buf)))...)
	}
	for empty := 0; ; {
		if err := l.ctx.Err(); err != nil {
			return &ParseError{Name: l.name, Line: l.line + 1, Err: err}
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if n > 0 {
			l.noLF = false
		}
		switch {
		case err == io.EOF:
			l.eof = true
			return nil
		case err != nil:
			return &ParseError{Name: l.name, Line: l.line + 1, Err: err}
		case n > 0:
			return nil
		}
		if empty++; empty == 100 {
			return &ParseError{Name: l.name, Line: l.line + 1, Err: io.ErrNoProgress}
		}
	}
}

// back makes the next call of next return the line the last call
// returned, again. It may be called once after each successful next.
func (l *lineReader) back() {
	if l.last < 0 {
		panic("edgelist: lineReader.back without a line to return")
	}
	l.pos, l.cr, l.last = l.last, false, -1
	l.line--
}

// failure returns the error that stopped next, or nil at a clean end.
func (l *lineReader) failure() error {
	if l.err == io.EOF {
		return nil
	}
	return l.err
}

// errorf returns a *ParseError for the current line.
func (l *lineReader) errorf(sentinel error, format string, args ...any) error {
	return &ParseError{Name: l.name, Line: l.line, Err: sentinel, Detail: fmt.Sprintf(format, args...)}
}

// splitFields appends to dst the fields of line separated by runs of
// spaces, tabs and commas.
func splitFields(line []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	start := -1
	for i, c := range line {
		if c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\v' || c == '\f' {
			if start >= 0 {
				dst = append(dst, line[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, line[start:])
	}
	return dst
}

// parseUint parses an unsigned decimal integer (digits only, no sign)
// without allocating. ok is false for anything else, including a value
// above 2^64−1.
func parseUint(b []byte) (n uint64, ok bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// idProblem says why b is not a vertex id of a free-id format (Snap,
// events), which is any unsigned 64-bit decimal (parseUint): it returns
// ErrRange for a negative number or one above 2^64−1, ErrSyntax for
// anything else, and a detail for the error.
func idProblem(b []byte) (sentinel error, detail string) {
	switch {
	case len(b) > 1 && b[0] == '-' && isNumber(b):
		return ErrRange, fmt.Sprintf("negative id %s: ids are unsigned 64-bit labels", b)
	case len(b) > 0 && allDigits(b):
		return ErrRange, fmt.Sprintf("id %s is above 2^64-1", b)
	}
	return ErrSyntax, fmt.Sprintf("id %q is not an unsigned integer", b)
}

// isNumber reports whether b is a decimal number: an optional sign, digits
// with at most one '.', and an optional exponent ("e-3").
func isNumber(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	mant, exp, _ := bytes.Cut(bytes.ToLower(b), []byte("e"))
	intPart, frac, _ := bytes.Cut(mant, []byte("."))
	if len(intPart)+len(frac) == 0 || !allDigits(intPart) || !allDigits(frac) {
		return false
	}
	if len(b) > len(mant) { // there is an exponent
		if len(exp) > 0 && (exp[0] == '-' || exp[0] == '+') {
			exp = exp[1:]
		}
		return len(exp) > 0 && allDigits(exp)
	}
	return true
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isComment reports whether a line is blank or a '#' or '%' comment.
func isComment(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r")
	return len(t) == 0 || t[0] == '#' || t[0] == '%'
}
