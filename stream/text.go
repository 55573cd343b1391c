package stream

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// maxTextLineBytes bounds one text line so that a file with no newlines
// cannot make the reader buffer it whole.
const maxTextLineBytes = 1 << 16

// TextReader decodes the text formats: typed ("type src dst" lines) or
// untyped ("src dst" lines, all inserts). It applies the same checks as
// Reader and reports problems with their line number.
//
// TextReader is not safe for concurrent use.
type TextReader struct {
	sc    *bufio.Scanner
	name  string
	typed bool
	auto  bool // decide typed from the first update line
	h     Header
	line  int64
	next  uint64
	err   error
}

// NewTextReader reads the first line "vertices count" of r. typed selects
// "type src dst" lines, else "src dst". name, if not empty, is used in
// errors.
func NewTextReader(r io.Reader, name string, typed bool) (*TextReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxTextLineBytes)
	t := &TextReader{sc: sc, name: name, typed: typed}
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
	if t.h.Vertices < 2 {
		return nil, &FormatError{Name: name, Index: -1, Line: t.line, Err: ErrNoVertices}
	}
	if t.h.Updates == 0 {
		return nil, &FormatError{Name: name, Index: -1, Line: t.line, Err: ErrNoUpdates}
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

// fields returns the fields of the next non-blank line.
func (t *TextReader) fields() ([][]byte, bool, error) {
	for t.sc.Scan() {
		t.line++
		f := bytes.Fields(t.sc.Bytes())
		if len(f) > 0 {
			return f, true, nil
		}
	}
	if err := t.sc.Err(); err != nil {
		return nil, false, &FormatError{Name: t.name, Index: int64(t.next), Line: t.line + 1,
			Err: ErrSyntax, Detail: err.Error()}
	}
	return nil, false, nil
}

func (t *TextReader) syntax(index int64, detail string) error {
	return &FormatError{Name: t.name, Index: index, Line: t.line, Err: ErrSyntax,
		Detail: fmt.Sprintf("%s, got %q", detail, t.sc.Bytes())}
}

// Header returns the header from the first line.
func (t *TextReader) Header() Header { return t.h }

// Read decodes up to len(dst) updates. See Source.Read.
func (t *TextReader) Read(dst []Update) (int, error) {
	if t.err != nil {
		return 0, t.err
	}
	n := 0
	for n < len(dst) {
		u, err := t.one()
		if err != nil {
			t.err = err
			break
		}
		dst[n] = u
		n++
	}
	if n > 0 {
		return n, nil
	}
	return 0, t.err
}

func (t *TextReader) one() (Update, error) {
	f, ok, err := t.fields()
	if err != nil {
		return Update{}, err
	}
	idx := int64(t.next)
	if !ok {
		if t.next < t.h.Updates {
			return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line + 1,
				Err: ErrTruncated, Detail: fmt.Sprintf("header promises %d updates", t.h.Updates)}
		}
		return Update{}, io.EOF
	}
	if t.next >= t.h.Updates {
		return Update{}, &FormatError{Name: t.name, Index: idx, Line: t.line, Err: ErrTrailing,
			Detail: fmt.Sprintf("header promises %d updates", t.h.Updates)}
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
