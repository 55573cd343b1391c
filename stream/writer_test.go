package stream

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestWriter_Failure(t *testing.T) {
	f := func(u Update, want error) {
		t.Helper()
		var buf bytes.Buffer
		w, err := NewWriter(&buf, Header{Vertices: 4, Updates: 1})
		requireNoError(t, err)
		if err := w.Write(u); !errors.Is(err, want) {
			t.Errorf("Write(%+v) = %v, want %v", u, err, want)
		}
		// The rejected update was not written: one good one still fits.
		requireNoError(t, w.Write(ins(0, 1)))
		requireNoError(t, w.Close())
		if buf.Len() != HeaderBytes+RecordBytes {
			t.Errorf("stream is %d bytes", buf.Len())
		}
	}
	f(Update{Type: 2, Edge: Edge{0, 1}}, ErrBadUpdateType)
	f(ins(4, 1), ErrVertexRange)
	f(del(1, 4), ErrVertexRange)
	f(ins(2, 2), ErrSelfLoop)
}

func TestWriter_Count(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Vertices: 4, Updates: 2})
	requireNoError(t, err)
	requireNoError(t, w.Write(ins(0, 1)))
	if err := w.Close(); !errors.Is(err, ErrTruncated) {
		t.Errorf("Close after 1 of 2 updates = %v, want ErrTruncated", err)
	}
	requireNoError(t, w.Write(ins(1, 2)))
	if err := w.Write(ins(2, 3)); !errors.Is(err, ErrTrailing) {
		t.Errorf("Write of a third update = %v, want ErrTrailing", err)
	}
	requireNoError(t, w.Close())
	r, err := NewReader(&buf)
	requireNoError(t, err)
	got, err := readAll(r, 10)
	if err != nil || !slices.Equal(got, []Update{ins(0, 1), ins(1, 2)}) {
		t.Errorf("read back %v, %v", got, err)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriter_WriteError(t *testing.T) {
	w, err := NewWriter(errWriter{}, Header{Vertices: 4, Updates: 1})
	requireNoError(t, err) // buffered
	requireNoError(t, w.Write(ins(0, 1)))
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close = %v, want the write error", err)
	}
}
