package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func requireNoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ins(s, d uint32) Update { return Update{Type: Insert, Edge: Edge{Src: s, Dst: d}} }
func del(s, d uint32) Update { return Update{Type: Delete, Edge: Edge{Src: s, Dst: d}} }

// record returns the 9-byte encoding of one record, whatever its values.
func record(typ byte, src, dst uint32) []byte {
	b := []byte{typ}
	b = append(b, byte(src), byte(src>>8), byte(src>>16), byte(src>>24))
	return append(b, byte(dst), byte(dst>>8), byte(dst>>16), byte(dst>>24))
}

// encode returns a well-formed binary stream of us, written by Writer.
func encode(tb testing.TB, vertices uint32, us ...Update) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Vertices: vertices, Updates: uint64(len(us))})
	requireNoError(tb, err)
	for _, u := range us {
		requireNoError(tb, w.Write(u))
	}
	requireNoError(tb, w.Close())
	return buf.Bytes()
}

// wrappers is the iotest matrix of bufio_test.go: every stream must read
// the same through each of them.
var wrappers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"plain", func(r io.Reader) io.Reader { return r }},
	{"one-byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data-err", iotest.DataErrReader},
	{"timeout", iotest.TimeoutReader},
}

// readAllRaw reads r to its end with ReadRaw, decoding and checking each
// record as a caller of ReadRaw must, and returns the updates and the error
// that ended it (nil at a clean end).
func readAllRaw(r *Reader) ([]Update, error) {
	var out []Update
	for {
		recs, first, err := r.ReadRaw()
		if len(recs) > 0 && err != nil {
			return out, fmt.Errorf("ReadRaw returned %d bytes and error %v", len(recs), err)
		}
		if len(recs)%RecordBytes != 0 {
			return out, fmt.Errorf("ReadRaw returned %d bytes", len(recs))
		}
		for i := 0; i < len(recs); i += RecordBytes {
			rec := recs[i : i+RecordBytes]
			if err := r.BadRecord(first+uint64(i/RecordBytes), rec); err != nil {
				if _, _, again := r.ReadRaw(); again == nil || again.Error() != err.Error() {
					return out, fmt.Errorf("ReadRaw after bad record %q returned %v", err, again)
				}
				return out, err
			}
			out = append(out, Update{Type: UpdateType(rec[0]), Edge: Edge{
				Src: binary.LittleEndian.Uint32(rec[1:5]), Dst: binary.LittleEndian.Uint32(rec[5:9])}})
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// readAll reads src to its end chunk updates at a time. As bufio's tests
// do, it reads on after iotest.ErrTimeout, which must be transient. It
// returns the updates and the error that ended the stream (nil at a clean
// end), after checking the Source contract: a Read returns updates or an
// error, never both and never neither, and an error that ends the stream
// is returned again by the next call.
func readAll(src Source, chunk int) ([]Update, error) {
	buf := make([]Update, chunk)
	var out []Update
	for stalls := 0; stalls < 1000; {
		n, err := src.Read(buf)
		out = append(out, buf[:n]...)
		if n > 0 && err != nil {
			return out, fmt.Errorf("Read returned %d updates and error %v", n, err)
		}
		switch {
		case err == io.EOF:
			if n2, err2 := src.Read(buf); n2 != 0 || err2 != io.EOF {
				return out, fmt.Errorf("Read after io.EOF returned %d, %v", n2, err2)
			}
			return out, nil
		case errors.Is(err, iotest.ErrTimeout):
			stalls++
		case err != nil:
			if n2, err2 := src.Read(buf); n2 != 0 || err2 == nil || err2.Error() != err.Error() {
				return out, fmt.Errorf("Read after %q returned %d, %v", err, n2, err2)
			}
			return out, err
		case n == 0:
			return out, errors.New("Read returned 0 updates and no error")
		}
	}
	return out, errors.New("no progress after 1000 reads")
}

// where says where a *FormatError must point.
type where struct {
	index  int64 // update index, -1 for the header
	offset int64 // byte offset (binary), or -1 when not checked
	line   int64 // line number (text), or 0 when not checked
}

// checkFormatError checks that err is a *FormatError wrapping sentinel,
// pointing at w, and that its message names file (when not "") and the
// place.
func checkFormatError(t testing.TB, err, sentinel error, w where, file string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %v, want one wrapping %v", err, sentinel)
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FormatError", err, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message %q spans lines", msg)
	}
	if fe.Name != file || !strings.Contains(msg, file) {
		t.Errorf("message %q (Name %q) does not name %q", msg, fe.Name, file)
	}
	if fe.Index != w.index {
		t.Errorf("Index = %d, want %d (%s)", fe.Index, w.index, msg)
	}
	if w.offset >= 0 && fe.Offset != w.offset {
		t.Errorf("Offset = %d, want %d (%s)", fe.Offset, w.offset, msg)
	}
	if w.line > 0 && fe.Line != w.line {
		t.Errorf("Line = %d, want %d (%s)", fe.Line, w.line, msg)
	}
	var place string
	switch {
	case w.index < 0 && w.line > 0:
		place = fmt.Sprintf("header at line %d", w.line)
	case w.index < 0:
		place = "header"
	case w.line > 0:
		place = fmt.Sprintf("update %d at line %d", w.index, w.line)
	default:
		place = fmt.Sprintf("update %d at byte offset %d", w.index, w.offset)
	}
	if !strings.Contains(msg, place) {
		t.Errorf("message %q does not say %q", msg, place)
	}
}

// checkUpdate reports what is wrong with u in a stream of vertices, or "".
func checkUpdate(u Update, vertices uint32) string {
	switch {
	case u.Type > Delete:
		return "bad type"
	case u.Src >= vertices || u.Dst >= vertices:
		return "id out of range"
	case u.Src == u.Dst:
		return "self-loop"
	}
	return ""
}
