package streamgen

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"sketchcc/stream"
)

// sortedSlice is a time slice's records, sorted, and their binary
// encoding if the stream is binary.
type sortedSlice struct {
	recs []uint64
	enc  []byte
}

// recordOut writes sorted records to the stream: a binary stream's
// records are encoded by the sorting workers (encode) and written as
// bytes, in order, by write; a packed stream's go through its
// stream.UpdateWriter one by one.
type recordOut struct {
	g    *pairModel
	sw   stream.UpdateWriter // packed, or nil
	w    io.Writer           // binary
	free chan []byte         // encoding buffers written and free again
}

// newRecordOut writes the header of a stream of h in format f to w and
// returns the writer of g's records.
func newRecordOut(g *pairModel, w io.Writer, h stream.Header, f stream.Format, workers int) (*recordOut, error) {
	if f != stream.FormatBinary {
		sw, err := stream.NewFormatWriter(w, h, f)
		return &recordOut{g: g, sw: sw}, err
	}
	if _, err := w.Write(stream.AppendHeader(nil, h)); err != nil {
		return nil, fmt.Errorf("streamgen: cannot write the stream's header: %w", err)
	}
	// ordered keeps at most about 3·workers slices in flight.
	return &recordOut{g: g, w: w, free: make(chan []byte, 3*workers)}, nil
}

// encode returns the binary records of recs (nil for a packed stream).
// Safe for concurrent use.
func (o *recordOut) encode(recs []uint64) []byte {
	if o.sw != nil {
		return nil
	}
	var buf []byte
	select {
	case buf = <-o.free:
	default:
	}
	buf = slices.Grow(buf[:0], len(recs)*stream.RecordBytes)[:len(recs)*stream.RecordBytes]
	for i, r := range recs {
		u := o.g.decode(r)
		e := buf[i*stream.RecordBytes : (i+1)*stream.RecordBytes]
		e[0] = byte(u.Type)
		binary.LittleEndian.PutUint32(e[1:5], u.Src)
		binary.LittleEndian.PutUint32(e[5:9], u.Dst)
	}
	return buf
}

// write writes slice s's records; it is called in order of s, from one
// goroutine.
func (o *recordOut) write(s int, ss sortedSlice) error {
	if o.sw == nil {
		if _, err := o.w.Write(ss.enc); err != nil {
			return fmt.Errorf("streamgen: cannot write the stream: %w", err)
		}
		select {
		case o.free <- ss.enc:
		default:
		}
		return nil
	}
	for _, r := range ss.recs {
		if err := o.sw.Write(o.g.decode(r)); err != nil {
			return err
		}
	}
	return nil
}

// close flushes a packed stream.
func (o *recordOut) close() error {
	if o.sw != nil {
		return o.sw.Close()
	}
	return nil
}
