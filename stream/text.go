package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxTextLineBytes bounds one text line so that a file with no newlines
// cannot make the reader buffer it whole. It is also the read buffer.
const maxTextLineBytes = 1 << 16

// TextReader decodes the text formats: typed ("type src dst" lines) or
// untyped ("src dst" lines, all inserts). It applies the same checks as
// Reader and reports problems with their line number.
//
// A read error of the underlying reader is returned once, with the line
// number; a later call reads on from where it stopped, as bufio.Reader
// does. Bad input is a *FormatError, returned by every later call.
//
// TextReader is not safe for concurrent use.
type TextReader struct {
	in      lines
	text    []byte // the last line read
	name    string
	typed   bool
	auto    bool // decide typed from the first update line
	header  bool // the header line has been read
	h       Header
	line    int64 // number of the last line read, 1-based
	next    uint64
	err     error // sticky: io.EOF or a *FormatError
	pending error // read error to return after the updates before it
}

// lines splits an input into lines through a buffer of its own.
type lines struct {
	r        io.Reader
	buf      []byte
	pos, end int  // unread bytes are buf[pos:end]
	eof      bool // r has returned io.EOF
	noLF     bool // buf[pos:end] holds no LF (only lone CRs end lines there)
	cr       bool // the last line ended with CR: skip one LF that follows
}

// errLongLine is returned by lines.next for a line longer than its buffer.
var errLongLine = errors.New("stream: line longer than the buffer")

// NewTextReader reads the first line "vertices count" of r. typed selects
// "type src dst" lines, else "src dst". name, if not empty, is used in
// errors.
func NewTextReader(r io.Reader, name string, typed bool) (*TextReader, error) {
	t := &TextReader{in: lines{r: r, buf: make([]byte, maxTextLineBytes)}, name: name, typed: typed}
	f, ok, err := t.fields()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &FormatError{Name: name, Index: -1, Err: ErrEmpty}
	}
	if len(f) != 2 {
		return nil, t.syntax(-1, "want \"vertices updates\"")
	}
	v, err1 := strconv.ParseUint(string(f[0]), 10, 32)
	m, err2 := strconv.ParseUint(string(f[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return nil, t.syntax(-1, "want \"vertices updates\"")
	}
	t.h = Header{Vertices: uint32(v), Updates: m}
	t.header = true
	if t.h.Vertices < 2 {
		return nil, &FormatError{Name: name, Index: -1, Line: t.line, Err: ErrNoVertices}
	}
	return t, nil
}

// NewTextReaderAuto is NewTextReader with the format decided by the first
// update line: three fields mean typed, two untyped.
func NewTextReaderAuto(r io.Reader, name string) (*TextReader, error) {
	t, err := NewTextReader(r, name, false)
	if t != nil {
		t.auto = true
	}
	return t, err
}

// fields returns the fields of the next non-blank line, and false at the
// end of the input.
func (t *TextReader) fields() ([][]byte, bool, error) {
	for {
		line, err := t.readLine()
		if err == io.EOF {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		t.line++
		t.text = line
		if f := bytes.Fields(line); len(f) > 0 {
			return f, true, nil
		}
	}
}

// readLine returns the next line without its line end, valid until the
// next call, or io.EOF at the end of the input. A line ends at LF, CRLF or
// a lone CR.
func (t *TextReader) readLine() ([]byte, error) {
	line, err := t.in.next()
	switch {
	case err == nil || err == io.EOF:
		return line, err
	case err == errLongLine:
		return nil, &FormatError{Name: t.name, Index: t.index(), Line: t.line + 1, Err: ErrSyntax,
			Detail: fmt.Sprintf("line longer than %d bytes", len(t.in.buf))}
	default:
		return nil, fmt.Errorf("stream: %scannot read line %d: %w", namePrefix(t.name), t.line+1, err)
	}
}

// next returns the next line without its line end, valid until the next
// call. At the end of the input it returns io.EOF; for a line longer than
// l.buf, errLongLine; for a read error of l.r, that error, and
// io.ErrNoProgress after 100 reads in a row returned nothing.
func (l *lines) next() ([]byte, error) {
	for empty := 0; ; {
		if l.cr && l.pos < l.end {
			if l.buf[l.pos] == '\n' {
				l.pos++
			}
			l.cr = false
		}
		if !l.cr {
			if i := IndexLineEnd(l.buf[l.pos:l.end], &l.noLF); i >= 0 {
				line := l.buf[l.pos : l.pos+i]
				l.cr = l.buf[l.pos+i] == '\r'
				l.pos += i + 1
				return line, nil
			}
		}
		if l.eof {
			l.cr = false
			if l.pos == l.end {
				return nil, io.EOF
			}
			line := l.buf[l.pos:l.end] // a last line with no line end
			l.pos = l.end
			return line, nil
		}
		if l.pos > 0 {
			l.end = copy(l.buf, l.buf[l.pos:l.end])
			l.pos = 0
		}
		if l.end == len(l.buf) {
			return nil, errLongLine
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if n > 0 {
			l.noLF = false
		}
		switch {
		case err == io.EOF:
			l.eof = true
		case err != nil:
			return nil, err
		case n == 0:
			if empty++; empty == 100 {
				return nil, io.ErrNoProgress
			}
		}
	}
}

// IndexLineEnd returns the index in b of the first line end of the text
// formats (LF, or CR: a lone CR or the CR of a CRLF), or -1. It looks for
// LF first (vectorised), then for a CR before it. *noLF caches that b holds
// no LF, so that a file of lone CRs is not rescanned for one per line: the
// caller sets it to false whenever bytes are added after b, and passes the
// same variable for every b that is a suffix of the previous one.
func IndexLineEnd(b []byte, noLF *bool) int {
	lf := -1
	if !*noLF {
		if lf = bytes.IndexByte(b, '\n'); lf < 0 {
			*noLF = true
		}
	}
	if lf >= 0 {
		b = b[:lf]
	}
	if cr := bytes.IndexByte(b, '\r'); cr >= 0 {
		return cr
	}
	return lf
}

// index is the update index for an error at the current line: -1 in the
// header.
func (t *TextReader) index() int64 {
	if !t.header {
		return -1
	}
	return int64(t.next)
}

func (t *TextReader) syntax(index int64, detail string) error {
	got := t.text
	if len(got) > 80 { // quote enough to recognise the line, not 64 KiB of it
		got = got[:80]
	}
	return &FormatError{Name: t.name, Index: index, Line: t.line, Err: ErrSyntax,
		Detail: fmt.Sprintf("%s, got %q", detail, got)}
}

// Header returns the header from the first line.
func (t *TextReader) Header() Header { return t.h }

// Read decodes up to len(dst) updates. See Source.Read.
func (t *TextReader) Read(dst []Update) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	if err := t.pending; err != nil {
		t.pending = nil
		return 0, err
	}
	n := 0
	for n < len(dst) {
		u, err := t.one()
		if err != nil {
			if _, ok := err.(*FormatError); ok || err == io.EOF {
				t.err = err
			} else {
				t.pending = err
			}
			break
		}
		dst[n] = u
		n++
	}
	if n > 0 {
		return n, nil
	}
	if t.err != nil {
		return 0, t.err
	}
	err := t.pending
	t.pending = nil
	return 0, err
}

func (t *TextReader) one() (Update, error) {
	f, ok, err := t.fields()
	if err != nil {
		return Update{}, err
	}
	idx := int64(t.next)
	if !ok {
		if t.next < t.h.Updates {
			return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line + 1, Err: truncatedEOF,
				Detail: fmt.Sprintf("the input ends after line %d; the header promises %s", t.line, UpdateCount(t.h.Updates))}
		}
		return Update{}, io.EOF
	}
	if t.next >= t.h.Updates {
		return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line, Err: ErrTrailing,
			Detail: "header promises " + UpdateCount(t.h.Updates)}
	}
	if t.auto {
		t.typed, t.auto = len(f) == 3, false
	}
	var u Update
	want := "want \"src dst\""
	if t.typed {
		want = "want \"type src dst\""
		if len(f) != 3 {
			return Update{}, t.syntax(idx, want)
		}
		ty, err := strconv.ParseUint(string(f[0]), 10, 8)
		if err != nil {
			return Update{}, t.syntax(idx, want)
		}
		if ty > 1 {
			return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line,
				Err: ErrBadUpdateType, Detail: fmt.Sprintf("type %d", ty)}
		}
		u.Type = UpdateType(ty)
		f = f[1:]
	} else if len(f) != 2 {
		return Update{}, t.syntax(idx, want)
	}
	s, err1 := strconv.ParseUint(string(f[0]), 10, 32)
	d, err2 := strconv.ParseUint(string(f[1]), 10, 32)
	if err1 != nil || err2 != nil {
		return Update{}, t.syntax(idx, want)
	}
	u.Src, u.Dst = uint32(s), uint32(d)
	switch {
	case u.Src >= t.h.Vertices || u.Dst >= t.h.Vertices:
		return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line, Err: ErrVertexRange,
			Detail: fmt.Sprintf("edge (%d,%d), vertices %d", u.Src, u.Dst, t.h.Vertices)}
	case u.Src == u.Dst:
		return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line, Err: ErrSelfLoop,
			Detail: fmt.Sprintf("edge (%d,%d)", u.Src, u.Dst)}
	}
	t.next++
	return u, nil
}
