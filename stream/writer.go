package stream

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Writer writes a binary stream. It writes the header first and checks at
// Close that exactly Header.Updates updates were written.
//
// Writer is not safe for concurrent use.
type Writer struct {
	w   *bufio.Writer
	h   Header
	n   uint64
	rec [RecordBytes]byte
	err error
}

// NewWriter writes h to w and returns a Writer for its updates. Writes are
// buffered; Close flushes.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(AppendHeader(nil, h)); err != nil {
		return nil, fmt.Errorf("stream: cannot write header: %w", err)
	}
	return &Writer{w: bw, h: h}, nil
}

// Write appends one update. It returns an error, without writing, for an
// update that the Reader would reject (type, range, self-loop) or one past
// the header's count.
func (w *Writer) Write(u Update) error {
	if w.err != nil {
		return w.err
	}
	switch {
	case u.Type > Delete:
		return fmt.Errorf("stream: cannot write update %d: %w (type %d)", w.n, ErrBadUpdateType, u.Type)
	case u.Src >= w.h.Vertices || u.Dst >= w.h.Vertices:
		return fmt.Errorf("stream: cannot write update %d: %w (edge (%d,%d), vertices %d)",
			w.n, ErrVertexRange, u.Src, u.Dst, w.h.Vertices)
	case u.Src == u.Dst:
		return fmt.Errorf("stream: cannot write update %d: %w (edge (%d,%d))", w.n, ErrSelfLoop, u.Src, u.Dst)
	case w.n >= w.h.Updates:
		return fmt.Errorf("stream: cannot write update %d: %w (header promises %d)", w.n, ErrTrailing, w.h.Updates)
	}
	w.rec[0] = byte(u.Type)
	binary.LittleEndian.PutUint32(w.rec[1:5], u.Src)
	binary.LittleEndian.PutUint32(w.rec[5:9], u.Dst)
	if _, err := w.w.Write(w.rec[:]); err != nil {
		w.err = fmt.Errorf("stream: cannot write update %d: %w", w.n, err)
		return w.err
	}
	w.n++
	return nil
}

// Close flushes buffered updates. It returns an error wrapping ErrTruncated
// if fewer updates were written than the header promised. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("stream: cannot flush: %w", err)
	}
	if w.n != w.h.Updates {
		return fmt.Errorf("stream: %w: wrote %d updates, header promises %d", ErrTruncated, w.n, w.h.Updates)
	}
	return nil
}
