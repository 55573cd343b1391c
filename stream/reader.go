package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// readBufBytes is the Reader's buffer: 2^17 records (1.125 MiB), large
// enough that each read system call moves more than a megabyte and small
// enough to stay in L2/L3 while it is decoded.
const readBufBytes = RecordBytes << 17

// Reader decodes binary update records. It checks every record: the type
// byte is 0 or 1, both ids are < Header().Vertices, and Src != Dst.
//
// Reader is not safe for concurrent use.
type Reader struct {
	r    io.Reader
	name string
	h    Header

	buf      []byte
	pos, end int    // undecoded bytes are buf[pos:end]
	next     uint64 // index of the next record to decode
	limit    uint64 // index one past the last record to read
	pending  error  // error to report once buf[pos:end] is decoded
	err      error  // sticky error: io.EOF or a *FormatError
	digest   Digest // of the records Read returned

	// scan is the state of Next, Update and Err.
	scan struct {
		one [1]Update // one[0] is the update Next advanced to
		err error     // the error that ended Next
	}
}

// NewReader reads and checks the header from r and returns a Reader for the
// records that follow. It returns a *FormatError wrapping ErrEmpty,
// io.ErrUnexpectedEOF or ErrNoVertices for a bad header. A header of zero
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
	var hb [HeaderBytes]byte
	n, err := io.ReadFull(r, hb[:])
	if err != nil {
		if n == 0 && err == io.EOF {
			err = ErrEmpty
		} else if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = io.ErrUnexpectedEOF
		} else {
			return nil, fmt.Errorf("stream: %scannot read header: %w", namePrefix(name), err)
		}
		return nil, &FormatError{Name: name, Index: -1, Offset: 0, Err: err,
			Detail: fmt.Sprintf("%d of %d header bytes", n, HeaderBytes)}
	}
	h := DecodeHeader(hb[:])
	if err := checkHeader(h, name); err != nil {
		return nil, err
	}
	return &Reader{r: r, name: name, h: h, limit: h.Updates}, nil
}

func checkHeader(h Header, name string) error {
	if h.Vertices < 2 {
		return &FormatError{Name: name, Index: -1, Err: ErrNoVertices,
			Detail: fmt.Sprintf("vertices %d", h.Vertices)}
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
	if r.err != nil {
		return 0, r.err
	}
	n := 0
	for n < len(dst) && r.more() {
		k := min(len(dst)-n, (r.end-r.pos)/RecordBytes)
		b := r.buf[r.pos : r.pos+k*RecordBytes]
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
				r.pos += i * RecordBytes
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
		r.pos += k * RecordBytes
	}
	if n > 0 {
		return n, nil
	}
	return 0, r.endErr()
}

// more reads until a whole record is buffered and reports whether one is;
// when none is, the input has ended or failed (endErr says which).
func (r *Reader) more() bool {
	for r.end-r.pos < RecordBytes {
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
// At the end of the records, and for a short or failing input, it returns
// no records and the error Read would.
func (r *Reader) ReadRaw() (recs []byte, first uint64, err error) {
	if r.err != nil {
		return nil, r.next, r.err
	}
	if !r.more() {
		return nil, r.next, r.endErr()
	}
	k := (r.end - r.pos) / RecordBytes
	recs, first = r.buf[r.pos:r.pos+k*RecordBytes], r.next
	r.pos += k * RecordBytes
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
	var b [1]byte
	n, err := io.ReadFull(r.r, b[:])
	switch {
	case n > 0:
		r.err = &FormatError{Name: r.name, Index: int64(r.limit), Offset: RecordOffset(r.limit),
			Err: ErrTrailing, Detail: "header promises " + UpdateCount(r.h.Updates)}
	case err == io.EOF:
		r.err = io.EOF
	default:
		r.pending = fmt.Errorf("stream: %scannot read past the last update at byte offset %d: %w",
			namePrefix(r.name), RecordOffset(r.limit), err)
	}
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
	if r.buf == nil {
		// A short range gets a buffer of its own size.
		r.buf = make([]byte, min(readBufBytes, max(RecordBytes, (r.limit-r.next)*RecordBytes)))
	}
	rest := copy(r.buf, r.buf[r.pos:r.end])
	r.pos, r.end = 0, rest
	// Bytes still to come for the records in [next, limit), minus what buf
	// already holds.
	want := (r.limit-r.next)*RecordBytes - uint64(rest)
	room := uint64(len(r.buf) - rest)
	got, err := io.ReadFull(r.r, r.buf[rest:rest+int(min(want, room))])
	r.end += got
	if err == nil {
		return
	}
	// Records decodable from buf are still returned; the error comes after.
	bad := r.next + uint64(r.end/RecordBytes)
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

// File is an open binary stream file whose size has been checked against its
// header. Its Readers read disjoint record ranges and may run concurrently.
type File struct {
	f    *os.File
	name string
	h    Header

	// regular is false for a pipe, socket or device: such a file can be
	// read only in order, so it has one Reader, from record 0, and taken
	// says whether it was handed out.
	regular bool
	taken   atomic.Bool
}

// Open opens the binary stream at path, reads its header and checks the
// file's size against it before any update is read: a file shorter than
// 12 + 9·Updates bytes is a *FormatError wrapping ErrTruncated that gives
// both sizes, a longer one wraps ErrTrailing. It advises the kernel that the
// file will be read sequentially. The size of a pipe or device cannot be
// checked up front; its Reader reports truncation when it meets it.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("stream: cannot open: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stream: cannot stat %s: %w", path, err)
	}
	if fi.IsDir() {
		f.Close()
		// Say it as the read would, so that callers can test for
		// syscall.EISDIR with errors.Is.
		return nil, fmt.Errorf("stream: cannot open: %w", &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR})
	}
	r, err := newNamedReader(f, path)
	if err != nil {
		f.Close()
		var fe *FormatError
		if errors.As(err, &fe) && fe.Err == ErrTruncated && fi.Mode().IsRegular() {
			fe.Detail = fmt.Sprintf("file is %d bytes, %s", fi.Size(), fe.Detail)
		}
		return nil, err
	}
	h := r.h
	if fi.Mode().IsRegular() {
		want := RecordOffset(h.Updates)
		if size := fi.Size(); size != want {
			f.Close()
			// The update where the file departs from its header: the
			// first one cut short, or the first past the promised count.
			k := uint64(size-HeaderBytes) / RecordBytes
			e := &FormatError{Name: path, Index: int64(k), Offset: RecordOffset(k), Err: ErrTruncated}
			if size > want {
				e.Index, e.Offset, e.Err = int64(h.Updates), want, ErrTrailing
			}
			e.Detail = fmt.Sprintf("file is %d bytes, header promises %s = %d bytes",
				size, UpdateCount(h.Updates), want)
			return nil, e
		}
		// Advice only; a failure changes nothing but speed.
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
	}
	return &File{f: f, name: path, h: h, regular: fi.Mode().IsRegular()}, nil
}

// Header returns the file's header.
func (f *File) Header() Header { return f.h }

// Reader returns a Reader for records [lo, hi) of the file. Its errors
// carry absolute record indices and byte offsets. hi is capped at
// Header().Updates. Several goroutines may call Reader, each then
// reading its own Reader.
//
// A file that is not a regular file (a pipe, /dev/stdin) can only be read
// in order: its first Reader must start at record 0, and any other Reader
// fails on its first Read with an error wrapping errors.ErrUnsupported.
func (f *File) Reader(lo, hi uint64) *Reader {
	hi = min(hi, f.h.Updates)
	lo = min(lo, hi)
	if !f.regular {
		r := &Reader{r: f.f, name: f.name, h: f.h, next: lo, limit: hi}
		if lo != 0 || f.taken.Swap(true) {
			r.err = fmt.Errorf("stream: %s is not a regular file, so it can be read only once, from record 0 (asked for [%d, %d)): %w",
				f.name, lo, hi, errors.ErrUnsupported)
		}
		return r
	}
	off := RecordOffset(lo)
	sr := io.NewSectionReader(f.f, off, RecordOffset(hi)-off)
	return &Reader{r: sr, name: f.name, h: f.h, next: lo, limit: hi}
}

// ReaderBuf is Reader reading through buf, which the caller may reuse
// for the next range once this Reader is done with, so that a goroutine
// reading many short ranges does not allocate (and fault in) a buffer per
// range. buf must hold at least RecordBytes bytes; a shorter one is
// replaced by a new buffer.
func (f *File) ReaderBuf(lo, hi uint64, buf []byte) *Reader {
	r := f.Reader(lo, hi)
	if len(buf) >= RecordBytes {
		r.buf = buf
	}
	return r
}

// Close closes the file. Readers must not be used after it.
func (f *File) Close() error { return f.f.Close() }

// namePrefix returns "name: ", or "" for an unnamed input.
func namePrefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

// Cursor reads a File's records in order, as a Source, and lets a caller
// that reads with several goroutines take a range of records past the
// cursor (Pos, File, Skip). It keeps the Digest of the records before Pos,
// as long as every record it moved past was hashed: by its Read, or by the
// caller of Skip or SeekDigest. It is not safe for concurrent use.
type Cursor struct {
	f    *File
	next uint64  // index of the next record Read returns
	seq  *Reader // reads from next on; nil after a move
	// base is the digest of records [0, next) when seq was made (of
	// [0, next) itself while seq is nil), valid when known.
	base  Digest
	known bool
}

// Cursor returns a Cursor at record 0, whose digest is known (that of no
// records). A File that is not a regular file can only be read once, in
// order: Seek, SeekDigest and Skip fail for it.
func (f *File) Cursor() *Cursor { return &Cursor{f: f, known: true} }

// Header returns the stream's header.
func (c *Cursor) Header() Header { return c.f.h }

// File returns the file the Cursor reads.
func (c *Cursor) File() *File { return c.f }

// Pos returns the index of the next record Read returns.
func (c *Cursor) Pos() uint64 { return c.next }

// Seekable reports whether Seek can move the Cursor: the file is a
// regular file.
func (c *Cursor) Seekable() bool { return c.f.regular }

// Digest returns the digest of records [0, Pos()) and true, or false when
// it is not known: after a Seek to a record other than 0, until the next
// SeekDigest.
func (c *Cursor) Digest() (Digest, bool) {
	if !c.known {
		return Digest{}, false
	}
	if c.seq == nil {
		return c.base, true
	}
	return c.base.Append(c.seq.Digest()), true
}

// Seek makes Read continue at record i, at most Header().Updates, and
// forgets any error of the records before it. The digest is known after
// it only for i = 0. It returns an error wrapping errors.ErrUnsupported
// for a file that is not a regular file.
func (c *Cursor) Seek(i uint64) error {
	if err := c.move(min(i, c.f.h.Updates)); err != nil {
		return err
	}
	c.base, c.known = Digest{}, c.next == 0
	return nil
}

// SeekDigest is Seek to record d.Records, at most Header().Updates, with
// d the digest of records [0, d.Records) as the caller knows it (a
// checkpoint's, checked against the file); the digest is known after it.
func (c *Cursor) SeekDigest(d Digest) error {
	if d.Records > c.f.h.Updates {
		return fmt.Errorf("stream: %s: cannot seek to record %d of %d", c.f.name, d.Records, c.f.h.Updates)
	}
	if err := c.move(d.Records); err != nil {
		return err
	}
	c.base, c.known = d, true
	return nil
}

// Skip moves the Cursor past the next d.Records records, which the caller
// has read from File() itself and hashed into d, so that the digest stays
// known (when it was). It returns an error, and does not move, for a
// range past the end or a file that is not a regular file.
func (c *Cursor) Skip(d Digest) error {
	if d.Records > c.f.h.Updates-c.next {
		return fmt.Errorf("stream: %s: cannot skip %d records at record %d of %d", c.f.name, d.Records, c.next, c.f.h.Updates)
	}
	before, known := c.Digest()
	if err := c.move(c.next + d.Records); err != nil {
		return err
	}
	c.base, c.known = before.Append(d), known
	return nil
}

// move makes Read continue at record i.
func (c *Cursor) move(i uint64) error {
	if !c.f.regular {
		return fmt.Errorf("stream: %s is not a regular file, so it cannot seek: %w", c.f.name, errors.ErrUnsupported)
	}
	c.next, c.seq = i, nil
	return nil
}

// Read decodes the next updates into dst, as Reader.Read does, and hashes
// the records it returns into the digest.
func (c *Cursor) Read(dst []Update) (int, error) {
	if c.seq == nil {
		c.seq = c.f.Reader(c.next, c.f.h.Updates)
	}
	n, err := c.seq.Read(dst)
	c.next += uint64(n)
	return n, err
}
