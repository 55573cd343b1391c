package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// File is an open stream file, binary or packed, whose size has been
// checked against its header. Its Readers read disjoint record ranges and
// may run concurrently.
type File struct {
	f    *os.File
	name string
	h    Header
	pl   *packedLayout // nil for a binary stream

	// regular is false for a pipe, socket or device: such a file can be
	// read only in order, so it has one Reader, from record 0, and taken
	// says whether it was handed out.
	regular bool
	taken   atomic.Bool
	// direct, when ReadDirect turned it on, reads the records of a
	// regular file with O_DIRECT.
	direct *directFile
}

// Open opens the stream at path, binary or packed (its first 8 bytes say
// which: IsPacked), reads its header and checks the file's size against it
// before any update is read: a file shorter than its header promises (12 +
// 9·Updates bytes for a binary stream) is a *FormatError wrapping
// ErrTruncated that gives both sizes and, for a packed stream, names the
// block where the file ends; a longer one wraps ErrTrailing. It advises
// the kernel that the file will be read sequentially. The size of a pipe
// or device cannot be checked up front; its Reader reports truncation when
// it meets it.
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
	file := &File{f: f, name: path, h: r.h, regular: fi.Mode().IsRegular()}
	if r.pk != nil {
		file.pl = &r.pk.l
	}
	if file.regular {
		if err := file.checkSize(fi.Size()); err != nil {
			f.Close()
			return nil, err
		}
		// Advice only; a failure changes nothing but speed.
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
	}
	return file, nil
}

// checkSize returns a *FormatError unless size is the one f's header
// implies.
func (f *File) checkSize(size int64) error {
	if f.pl != nil {
		return checkPackedSize(*f.pl, f.name, size)
	}
	want := RecordOffset(f.h.Updates)
	if size == want {
		return nil
	}
	// The update where the file departs from its header: the first one
	// cut short, or the first past the promised count.
	k := uint64(size-HeaderBytes) / RecordBytes
	e := &FormatError{Name: f.name, Index: int64(k), Offset: RecordOffset(k), Err: ErrTruncated}
	if size > want {
		e.Index, e.Offset, e.Err = int64(f.h.Updates), want, ErrTrailing
	}
	e.Detail = fmt.Sprintf("file is %d bytes, header promises %s = %d bytes",
		size, UpdateCount(f.h.Updates), want)
	return e
}

// Header returns the file's header.
func (f *File) Header() Header { return f.h }

// BlockRecords returns the number of records a packed stream holds in a
// block, which a Reader reads and checks whole even for a range that
// holds part of it; a caller that cuts the stream into ranges for several
// Readers wastes no work with ranges whose ends are multiples of it. It is
// 1 for a binary stream.
func (f *File) BlockRecords() uint64 {
	if f.pl != nil {
		return f.pl.blockRecords
	}
	return 1
}

// Reader returns a Reader for records [lo, hi) of the file. Its errors
// carry absolute record indices and byte offsets. hi is capped at
// Header().Updates. Several goroutines may call Reader, each then
// reading its own Reader. In a packed stream it reads from the block
// holding lo (an offset computed from the header, not searched for) to
// the one holding hi−1.
//
// A file that is not a regular file (a pipe, /dev/stdin) can only be read
// in order: its first Reader must start at record 0, and any other Reader
// fails on its first Read with an error wrapping errors.ErrUnsupported.
func (f *File) Reader(lo, hi uint64) *Reader {
	hi = min(hi, f.h.Updates)
	lo = min(lo, hi)
	r := &Reader{r: f.f, name: f.name, h: f.h, next: lo, limit: hi}
	if f.pl != nil {
		r.pk = newPackedRange(f.f, f.name, *f.pl, lo, hi)
	}
	switch {
	case !f.regular && (lo != 0 || f.taken.Swap(true)):
		r.err = fmt.Errorf("stream: %s is not a regular file, so it can be read only once, from record 0 (asked for [%d, %d)): %w",
			f.name, lo, hi, errors.ErrUnsupported)
		if r.pk != nil {
			r.pk.err = r.err
		}
	case !f.regular:
	case r.pk != nil:
		off := f.pl.offset(r.pk.in.blk)
		r.pk.r = f.section(off, int64(r.pk.in.want))
	default:
		off := RecordOffset(lo)
		r.r = f.section(off, RecordOffset(hi)-off)
	}
	return r
}

// ReaderBuf is Reader reading through buf, which the caller may reuse
// for the next range once this Reader is done with, so that a goroutine
// reading many short ranges does not allocate (and fault in) a buffer per
// range. buf must hold at least RecordBytes bytes (a block and 8 bytes for
// a packed stream, after the decoding buffers packedReader.carve takes
// from it); a shorter one is replaced by a new buffer.
func (f *File) ReaderBuf(lo, hi uint64, buf []byte) *Reader {
	r := f.Reader(lo, hi)
	switch {
	case r.pk != nil:
		r.pk.in.buf = r.pk.carve(buf)
	case len(buf) >= RecordBytes:
		r.in.buf = buf
	}
	return r
}

// ReadBinaryAt reads len(b) bytes from offset off of the file's binary
// encoding into b, as io.ReaderAt does: the file's own bytes for a binary
// stream; for a packed one, the 12-byte binary header and the canonical
// 9-byte records the binary copy of the stream would hold, decoded (and
// checked) from the blocks that hold them. It returns io.EOF when the
// encoding ends before b is full, and the errors of the file's Readers.
// It is safe for concurrent use, as Reader is.
func (f *File) ReadBinaryAt(b []byte, off int64) (int, error) {
	if f.pl == nil {
		return f.f.ReadAt(b, off)
	}
	if off < 0 {
		return 0, fmt.Errorf("stream: %s: read at negative offset %d", f.name, off)
	}
	n := 0
	if off < HeaderBytes {
		n = copy(b, AppendHeader(nil, f.h)[off:])
	}
	if n == len(b) {
		return n, nil
	}
	at := off + int64(n) - HeaderBytes // from the first record on
	first := uint64(at / RecordBytes)
	skip := int(at % RecordBytes)
	r := f.Reader(first, first+uint64((skip+len(b)-n+RecordBytes-1)/RecordBytes))
	for n < len(b) {
		recs, _, err := r.ReadRaw()
		c := min(skip, len(recs)) // of the first record, the bytes before off
		skip -= c
		n += copy(b[n:], recs[c:])
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// section returns a reader of bytes [off, off+n) of a regular file.
func (f *File) section(off, n int64) io.Reader {
	if f.direct != nil {
		return f.direct.section(f.f, off, n)
	}
	return io.NewSectionReader(f.f, off, n)
}

// Close closes the file. Readers must not be used after it.
func (f *File) Close() error {
	if f.direct != nil {
		f.direct.close()
	}
	return f.f.Close()
}

// Cursor reads a File's records in order, as a Source, and lets a caller
// that reads with several goroutines take a range of records past the
// cursor (Pos, File, Skip). It keeps the Digest of the records before Pos,
// as long as every record it moved past was hashed: by its Read (or, in a
// packed regular file, by Digest), or by the caller of Skip or SeekDigest.
// It is not safe for concurrent use.
type Cursor struct {
	f    *File
	next uint64  // index of the next record Read returns
	seq  *Reader // reads from next on; nil after a move
	// base is the digest of records [0, from), valid when known: from is
	// next while seq is nil, and where seq started, or up to where
	// Digest hashed a packed seq's records, while it is not.
	base  Digest
	from  uint64
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
// SeekDigest. In a packed regular file, Read does not hash the records
// (the canonical encodings would cost about a fifth of the decode): Digest
// hashes those read since its last call, reading them from the file
// again, and returns false if that read fails.
func (c *Cursor) Digest() (Digest, bool) {
	switch {
	case !c.known:
		return Digest{}, false
	case c.seq == nil:
		return c.base, true
	case c.seq.pk == nil || !c.seq.pk.noHash:
		return c.base.Append(c.seq.Digest()), true
	}
	if c.from < c.next {
		d, err := c.f.Digest(context.Background(), c.from, c.next, nil)
		if err != nil {
			return Digest{}, false
		}
		c.base, c.from = c.base.Append(d), c.next
	}
	return c.base, true
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
		c.seq, c.from = c.f.Reader(c.next, c.f.h.Updates), c.next
		if c.seq.pk != nil && c.f.regular {
			c.seq.pk.noHash = true
		}
	}
	n, err := c.seq.Read(dst)
	c.next += uint64(n)
	return n, err
}
