package stream

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// readBufBytes is the Reader's buffer: 2^17 records (1.125 MiB), large
// enough that each read system call moves more than a megabyte and small
// enough to stay in L2/L3 while it is decoded.
const readBufBytes = RecordBytes << 17

// Reader decodes the update records of a binary or a packed stream. It
// checks every record: the type byte is 0 or 1, both ids are <
// Header().Vertices, and Src != Dst; in a packed stream, it checks every
// block's checksum before it returns any of its records.
//
// Reader is not safe for concurrent use.
type Reader struct {
	r    io.Reader
	name string
	h    Header

	in struct {
		buf      []byte
		pos, end int // undecoded bytes are buf[pos:end]
	}
	next    uint64 // index of the next record to decode
	limit   uint64 // index one past the last record to read
	pending error  // error to report once in.buf[pos:end] is decoded
	err     error  // sticky error: io.EOF or a *FormatError
	digest  Digest // of the records Read returned

	// pk, for a packed stream, decodes the records instead; every method
	// but Next, Update and Err hands over to it.
	pk *packedReader

	// scan is the state of Next, Update and Err.
	scan struct {
		one [1]Update // one[0] is the update Next advanced to
		err error     // the error that ended Next
	}
}

// NewReader reads and checks the header from r and returns a Reader for the
// records that follow, in the binary or the packed format: the first 8
// bytes tell which (IsPacked). It returns a *FormatError wrapping
// ErrEmpty, io.ErrUnexpectedEOF or ErrNoVertices for a bad header, or,
// for a packed one, ErrPackedHeader or ErrChecksum. A header of zero
// updates is a stream of Vertices isolated vertices: the Reader then
// returns io.EOF at once.
//
// After the last record the Reader reads once more to check that r ends
// there, and reports a *FormatError wrapping ErrTrailing if it does not;
// wrap r in an io.LimitReader if more data follows the stream.
func NewReader(r io.Reader) (*Reader, error) {
	return newNamedReader(r, "")
}

func newNamedReader(r io.Reader, name string) (*Reader, error) {
	h, l, err := readHeader(r, name)
	if err != nil {
		return nil, err
	}
	rd := &Reader{r: r, name: name, h: h, limit: h.Updates}
	if l != nil {
		rd.pk = newPackedRange(r, name, *l, 0, h.Updates)
	}
	return rd, nil
}

// ReadHeader reads and checks the header of a binary or packed stream
// from r, as NewReader does, and returns it with the stream's format. It
// reads the header's 12 or 32 bytes and no more, and returns the errors
// of NewReader.
func ReadHeader(r io.Reader) (Header, Format, error) {
	h, l, err := readHeader(r, "")
	if l != nil {
		return h, FormatPacked, err
	}
	return h, FormatBinary, err
}

// readHeader reads and checks the header at the start of r: a binary one,
// or a packed one when its first 8 bytes say so, whose layout it returns
// too (nil for a binary header).
func readHeader(r io.Reader, name string) (Header, *packedLayout, error) {
	var hb [PackedHeaderBytes]byte
	n, err := io.ReadFull(r, hb[:HeaderBytes])
	if err == nil && IsPacked(hb[:]) {
		var m int
		m, err = io.ReadFull(r, hb[HeaderBytes:])
		n += m
	}
	if err != nil {
		what := fmt.Sprintf("%d of %d header bytes", n, HeaderBytes)
		if IsPacked(hb[:n]) {
			what = fmt.Sprintf("%d of %d packed header bytes", n, PackedHeaderBytes)
		}
		if n == 0 && err == io.EOF {
			err = ErrEmpty
		} else if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = io.ErrUnexpectedEOF
		} else {
			return Header{}, nil, fmt.Errorf("stream: %scannot read header: %w", namePrefix(name), err)
		}
		return Header{}, nil, &FormatError{Name: name, Index: -1, Offset: 0, Err: err, Detail: what}
	}
	if n == PackedHeaderBytes {
		l, err := decodePackedHeader(hb[:], name)
		return l.h, &l, err
	}
	h := DecodeHeader(hb[:])
	return h, nil, checkHeader(h, name)
}

func checkHeader(h Header, name string) error {
	if h.Vertices < 2 {
		return &FormatError{Name: name, Index: -1, Err: ErrNoVertices,
			Detail: fmt.Sprintf("vertices %d", h.Vertices)}
	}
	if h.Updates == UnknownUpdates {
		return &FormatError{Name: name, Index: -1, Err: ErrUnknownCount,
			Detail: "only a live input (standard input or a TCP producer of main-node) reads it"}
	}
	// Bound the count so that RecordOffset(h.Updates), the size the header
	// promises, fits an int64.
	if h.Updates > (math.MaxInt64-HeaderBytes)/RecordBytes {
		return &FormatError{Name: name, Index: -1, Err: ErrTruncated,
			Detail: fmt.Sprintf("header promises %s, more than 2^63 bytes", UpdateCount(h.Updates))}
	}
	return nil
}

// DecodeHeader decodes a 12-byte binary header. b must hold at least
// HeaderBytes bytes.
func DecodeHeader(b []byte) Header {
	return Header{
		Vertices: binary.LittleEndian.Uint32(b[0:4]),
		Updates:  binary.LittleEndian.Uint64(b[4:12]),
	}
}

// AppendHeader appends the 12-byte binary encoding of h to b.
func AppendHeader(b []byte, h Header) []byte {
	b = binary.LittleEndian.AppendUint32(b, h.Vertices)
	return binary.LittleEndian.AppendUint64(b, h.Updates)
}

// Header returns the stream's header.
func (r *Reader) Header() Header { return r.h }

// Next advances to the next update and reports whether there is one. After
// it returns false, Err reports the error, if any.
func (r *Reader) Next() bool {
	n, err := r.Read(r.scan.one[:])
	if n == 1 {
		return true
	}
	r.scan.err = err
	return false
}

// Update returns the update Next advanced to.
func (r *Reader) Update() Update { return r.scan.one[0] }

// Err returns the error that made Next return false, or nil at a clean end
// of the stream.
func (r *Reader) Err() error {
	if r.scan.err == io.EOF {
		return nil
	}
	return r.scan.err
}

// Read decodes up to len(dst) updates into dst. See Source.Read. A record
// that fails a check ends the stream with a *FormatError naming its index
// and byte offset; a stream that ends before the header's count ends with a
// *FormatError wrapping io.ErrUnexpectedEOF and ErrTruncated. Both are
// returned again by every later call.
//
// Bytes after the last record are a *FormatError wrapping ErrTrailing.
//
// Any other error of the underlying reader is returned once, wrapped with
// the position, after the updates decoded before it; a later call reads
// again from where it stopped, as bufio.Reader does, so a caller may retry
// after a transient error such as a timeout.
//
// The records Read returns, and only those, are hashed into Digest.
func (r *Reader) Read(dst []Update) (int, error) {
	if r.pk != nil {
		return r.pk.Read(dst)
	}
	if r.err != nil {
		return 0, r.err
	}
	n := 0
	for n < len(dst) && r.more() {
		k := min(len(dst)-n, (r.in.end-r.in.pos)/RecordBytes)
		b := r.in.buf[r.in.pos : r.in.pos+k*RecordBytes]
		out := dst[n : n+k]
		vertices := r.h.Vertices
		for i := range out {
			rec := b[i*RecordBytes : i*RecordBytes+RecordBytes]
			t := rec[0]
			s := binary.LittleEndian.Uint32(rec[1:5])
			d := binary.LittleEndian.Uint32(rec[5:9])
			if t > 1 || s >= vertices || d >= vertices || s == d {
				r.err = r.recordError(r.next+uint64(i), t, s, d)
				r.digest = r.digest.Update(b[:i*RecordBytes])
				n += i
				r.next += uint64(i)
				r.in.pos += i * RecordBytes
				if n == 0 {
					return 0, r.err
				}
				return n, nil
			}
			out[i] = Update{Type: UpdateType(t), Edge: Edge{Src: s, Dst: d}}
		}
		// Hashed while the records are still in the cache.
		r.digest = r.digest.Update(b)
		n += k
		r.next += uint64(k)
		r.in.pos += k * RecordBytes
	}
	if n > 0 {
		return n, nil
	}
	return 0, r.endErr()
}

// more reads until a whole record is buffered and reports whether one is;
// when none is, the input has ended or failed (endErr says which).
func (r *Reader) more() bool {
	for r.in.end-r.in.pos < RecordBytes {
		if r.pending != nil {
			return false
		}
		if r.next >= r.limit {
			r.atEnd()
			return false
		}
		r.fill()
	}
	return true
}

// endErr is what ends the records when more finds none: io.EOF, a
// *FormatError (kept for every later call) or a read error (returned once).
func (r *Reader) endErr() error {
	if r.err != nil {
		return r.err
	}
	err := r.pending
	r.pending = nil
	if _, ok := err.(*FormatError); ok {
		r.err = err // a short input stays short
	}
	return err
}

// ReadRaw is Read for a caller that decodes records itself: it returns the
// next whole records buffered, at least one, as their 9-byte encodings
// (RecordBytes each; the slice aliases the Reader's buffer and is valid
// until the next call), and the index of the first. It does not check the
// records: the caller must, and report the first bad one with BadRecord.
// (The records of a packed stream are decoded, and checked as Read checks
// them, into their canonical 9-byte encodings, which BadRecord passes.)
// At the end of the records, and for a short or failing input, it returns
// no records and the error Read would.
func (r *Reader) ReadRaw() (recs []byte, first uint64, err error) {
	if r.pk != nil {
		return r.pk.ReadRaw()
	}
	if r.err != nil {
		return nil, r.next, r.err
	}
	if !r.more() {
		return nil, r.next, r.endErr()
	}
	k := (r.in.end - r.in.pos) / RecordBytes
	recs, first = r.in.buf[r.in.pos:r.in.pos+k*RecordBytes], r.next
	r.in.pos += k * RecordBytes
	r.next += uint64(k)
	return recs, first, nil
}

// DecodeRecord returns the endpoints of rec, one 9-byte record of a stream
// of the given vertex count, and whether it passes the checks Read makes:
// a type byte of 0 or 1, both ids below vertices, no self-loop. It is
// small enough to inline into a caller's loop over ReadRaw's records.
func DecodeRecord(rec []byte, vertices uint32) (src, dst uint32, ok bool) {
	_ = rec[RecordBytes-1]
	src = binary.LittleEndian.Uint32(rec[1:5])
	dst = binary.LittleEndian.Uint32(rec[5:9])
	return src, dst, rec[0] <= 1 && src < vertices && dst < vertices && src != dst
}

// BadRecord returns the *FormatError that Read gives for rec, the record
// of index i that ReadRaw returned, when it fails a check (type byte,
// vertex range, self-loop), and nil when it passes them. A bad record ends
// the Reader: every later call returns the error.
func (r *Reader) BadRecord(i uint64, rec []byte) error {
	s, d, ok := DecodeRecord(rec, r.h.Vertices)
	if ok {
		return nil
	}
	r.err = r.recordError(i, rec[0], s, d)
	if r.pk != nil {
		r.pk.err = r.err
	}
	return r.err
}

// atEnd decides what follows the last record: io.EOF when the input ends
// there, a *FormatError wrapping ErrTrailing when it does not. A Reader for
// a range that stops before the stream's end does not look.
func (r *Reader) atEnd() {
	if r.limit < r.h.Updates {
		r.err = io.EOF
		return
	}
	r.err, r.pending = endOf(r.r, r.name, r.h, RecordOffset(r.limit))
}

// endOf reads once past the last record of a stream, at byte offset end
// of r, and returns io.EOF when r ends there, or a *FormatError wrapping
// ErrTrailing when it does not, or else the read error, to return once.
func endOf(r io.Reader, name string, h Header, end int64) (sticky, pending error) {
	var b [1]byte
	n, err := io.ReadFull(r, b[:])
	switch {
	case n > 0:
		return &FormatError{Name: name, Index: int64(h.Updates), Offset: end,
			Err: ErrTrailing, Detail: "header promises " + UpdateCount(h.Updates)}, nil
	case err == io.EOF:
		return io.EOF, nil
	}
	return nil, fmt.Errorf("stream: %scannot read past the last update at byte offset %d: %w",
		namePrefix(name), end, err)
}

func (r *Reader) recordError(i uint64, t uint8, s, d uint32) error {
	e := &FormatError{Name: r.name, Index: int64(i), Offset: RecordOffset(i)}
	switch {
	case t > 1:
		e.Err, e.Detail = ErrBadUpdateType, fmt.Sprintf("type byte %d", t)
	case s >= r.h.Vertices || d >= r.h.Vertices:
		e.Err = ErrVertexRange
		e.Detail = fmt.Sprintf("edge (%d,%d), vertices %d", s, d, r.h.Vertices)
	default:
		e.Err, e.Detail = ErrSelfLoop, fmt.Sprintf("edge (%d,%d)", s, d)
	}
	return e
}

// fill reads the next chunk of records into buf, keeping any partial record
// at the front.
func (r *Reader) fill() {
	if r.in.buf == nil {
		// A short range gets a buffer of its own size.
		r.in.buf = make([]byte, min(readBufBytes, max(RecordBytes, (r.limit-r.next)*RecordBytes)))
	}
	rest := copy(r.in.buf, r.in.buf[r.in.pos:r.in.end])
	r.in.pos, r.in.end = 0, rest
	// Bytes still to come for the records in [next, limit), minus what buf
	// already holds.
	want := (r.limit-r.next)*RecordBytes - uint64(rest)
	room := uint64(len(r.in.buf) - rest)
	got, err := io.ReadFull(r.r, r.in.buf[rest:rest+int(min(want, room))])
	r.in.end += got
	if err == nil {
		return
	}
	// Records decodable from buf are still returned; the error comes after.
	bad := r.next + uint64(r.in.end/RecordBytes)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		r.pending = &FormatError{Name: r.name, Index: int64(bad), Offset: RecordOffset(bad),
			Err:    truncatedEOF,
			Detail: "header promises " + UpdateCount(r.h.Updates)}
		return
	}
	r.pending = fmt.Errorf("stream: %scannot read update %d at byte offset %d: %w",
		namePrefix(r.name), bad, RecordOffset(bad), err)
}

// truncatedEOF ends a stream that stops before its header's count: it is
// both ErrTruncated and io.ErrUnexpectedEOF, on one line.
var truncatedEOF = fmt.Errorf("%w: %w", ErrTruncated, io.ErrUnexpectedEOF)

// namePrefix returns "name: ", or "" for an unnamed input.
func namePrefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}
