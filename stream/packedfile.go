package stream

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// packedReadBytes is the most a PackedReader reads at once, unless one
// block is larger: about a megabyte per read system call, as the binary
// Reader's buffer.
const packedReadBytes = 1 << 20

// nextBlock makes the next block of the range current, once it is read
// whole and its checksum and padding are checked, or returns what ends
// the records: io.EOF, a *FormatError (kept for later calls) or a read
// error (returned until a call returns it with no records).
func (p *PackedReader) nextBlock() error {
	if p.next >= p.limit {
		if p.err == nil && p.pending == nil {
			p.atEnd()
		}
		if p.err != nil {
			return p.err
		}
		return p.pending
	}
	k := p.in.blk
	size := int(p.l.blockBytes(k))
	for p.in.end-p.in.pos < size {
		if p.pending != nil {
			return p.pending
		}
		if eof := p.fill(size); eof && p.in.end-p.in.pos < size {
			p.err = &FormatError{Name: p.name, Index: int64(k * p.l.blockRecords), Offset: p.l.offset(k),
				Err: truncatedEOF, Detail: fmt.Sprintf("block %d of %d ends after %d of its %d bytes; header promises %s",
					k, p.l.blocks(), p.in.end-p.in.pos, size, UpdateCount(p.l.h.Updates))}
			return p.err
		}
	}
	blk := p.in.buf[p.in.pos : p.in.pos+size]
	n := p.l.records(k)
	if stored, computed := binary.LittleEndian.Uint32(blk), blockCRC(k, blk[4:]); stored != computed {
		return p.blockError(k, ErrChecksum, fmt.Sprintf("stored CRC-32C %08x, computed %08x", stored, computed))
	}
	if pad := n * p.l.width % 8; pad != 0 && blk[size-1]>>pad != 0 {
		return p.blockError(k, ErrTrailing, fmt.Sprintf("non-zero padding bits %#02x after the last record", blk[size-1]>>pad))
	}
	p.cur.payload = p.in.buf[p.in.pos+4:]
	p.cur.k = k
	p.cur.last = min(k*p.l.blockRecords+n, p.limit)
	p.in.pos += size
	p.in.blk++
	return nil
}

// blockError ends the stream with a *FormatError for block k as a whole.
func (p *PackedReader) blockError(k uint64, sentinel error, detail string) error {
	first := k * p.l.blockRecords
	p.err = &FormatError{Name: p.name, Index: int64(first), Offset: p.l.offset(k), Err: sentinel,
		Detail: fmt.Sprintf("block %d of %d, records [%d, %d): %s", k, p.l.blocks(), first, first+p.l.records(k), detail)}
	return p.err
}

// recordError returns the *FormatError for u, the bad record p.next at
// bit offset bit of the current block's payload.
func (p *PackedReader) recordError(u Update, bit uint64) error {
	off := p.l.offset(p.cur.k) + 4 + int64(bit/8)
	e := &FormatError{Name: p.name, Index: int64(p.next), Offset: off, Err: ErrSelfLoop,
		Detail: fmt.Sprintf("edge (%d,%d); block %d at byte offset %d", u.Src, u.Dst, p.cur.k, p.l.offset(p.cur.k))}
	if u.Src >= p.l.h.Vertices || u.Dst >= p.l.h.Vertices {
		e.Err = ErrVertexRange
		e.Detail = fmt.Sprintf("edge (%d,%d), vertices %d; block %d at byte offset %d",
			u.Src, u.Dst, p.l.h.Vertices, p.cur.k, p.l.offset(p.cur.k))
	}
	return e
}

// fill reads more of the range's blocks into buf, keeping the unread
// bytes at the front, so that a block of size bytes fits. It reports
// whether the input ended; another read error goes to pending.
func (p *PackedReader) fill(size int) (eof bool) {
	if p.in.want == 0 {
		return true // the range's bytes are all read: a BUG, reported as truncation
	}
	if need := max(size, int(min(packedReadBytes, p.in.want))); len(p.in.buf) < need+8 {
		grown := make([]byte, need+8)
		p.in.end = copy(grown, p.in.buf[p.in.pos:p.in.end])
		p.in.buf, p.in.pos = grown, 0
	}
	rest := copy(p.in.buf, p.in.buf[p.in.pos:p.in.end])
	p.in.pos, p.in.end = 0, rest
	room := uint64(len(p.in.buf) - 8 - rest)
	got, err := io.ReadFull(p.r, p.in.buf[rest:rest+int(min(room, p.in.want))])
	p.in.end += got
	p.in.want -= uint64(got)
	if err == nil {
		return false
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return true
	}
	p.pending = fmt.Errorf("stream: %scannot read block %d at byte offset %d: %w",
		namePrefix(p.name), p.in.blk, p.l.offset(p.in.blk), err)
	return false
}

// atEnd decides what follows the last record, as the binary Reader's
// atEnd does: io.EOF when the input ends there, a *FormatError wrapping
// ErrTrailing when it does not.
func (p *PackedReader) atEnd() {
	if p.limit < p.l.h.Updates {
		p.err = io.EOF
		return
	}
	end := p.l.offset(p.l.blocks())
	var b [1]byte
	n, err := io.ReadFull(p.r, b[:])
	switch {
	case n > 0:
		p.err = &FormatError{Name: p.name, Index: int64(p.limit), Offset: end,
			Err: ErrTrailing, Detail: "header promises " + UpdateCount(p.l.h.Updates)}
	case err == io.EOF:
		p.err = io.EOF
	default:
		p.pending = fmt.Errorf("stream: %scannot read past the last block at byte offset %d: %w",
			namePrefix(p.name), end, err)
	}
}

// PackedFile is an open packed stream file whose size has been checked
// against its header. Its Readers read disjoint record ranges and may run
// concurrently.
type PackedFile struct {
	f    *os.File
	name string
	l    packedLayout

	// regular and taken are File's: a pipe has one Reader, from 0.
	regular bool
	taken   atomic.Bool
}

// OpenPacked opens the packed stream at path, reads and checks its header
// and checks the file's size against it before any update is read: a
// short file is a *FormatError wrapping ErrTruncated naming the block
// where it ends, a long one wraps ErrTrailing. The size of a pipe or
// device cannot be checked; its Reader reports truncation when it meets
// it.
func OpenPacked(path string) (*PackedFile, error) {
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
		return nil, fmt.Errorf("stream: cannot open: %w", &fs.PathError{Op: "open", Path: path, Err: syscall.EISDIR})
	}
	l, err := readPackedHeader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Mode().IsRegular() {
		if err := checkPackedSize(l, path, fi.Size()); err != nil {
			f.Close()
			return nil, err
		}
		_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL) // advice only
	}
	return &PackedFile{f: f, name: path, l: l, regular: fi.Mode().IsRegular()}, nil
}

// checkPackedSize returns a *FormatError unless size is the one l implies.
func checkPackedSize(l packedLayout, path string, size int64) error {
	want := l.offset(l.blocks())
	if size == want {
		return nil
	}
	e := &FormatError{Name: path, Index: int64(l.h.Updates), Offset: want, Err: ErrTrailing}
	if size < want {
		// The block the file ends in.
		full := int64(4 + l.payloadBytes(l.blockRecords))
		k := min(uint64((size-PackedHeaderBytes)/full), l.blocks()-1)
		e.Index, e.Offset, e.Err = int64(k*l.blockRecords), l.offset(k), ErrTruncated
	}
	e.Detail = fmt.Sprintf("file is %d bytes, header promises %s in %d blocks = %d bytes",
		size, UpdateCount(l.h.Updates), l.blocks(), want)
	return e
}

// Header returns the file's header.
func (f *PackedFile) Header() Header { return f.l.h }

// Reader returns a PackedReader for records [lo, hi) of the file, hi
// capped at Header().Updates: it reads from the block holding lo (an
// offset computed from the header, not searched for) to the one holding
// hi−1. Its errors carry absolute record indices and byte offsets.
// Several goroutines may call Reader, each then reading its own
// PackedReader. For a file that is not a regular file, as File.Reader.
func (f *PackedFile) Reader(lo, hi uint64) *PackedReader {
	hi = min(hi, f.l.h.Updates)
	lo = min(lo, hi)
	if !f.regular {
		p := newPackedRange(f.f, f.name, f.l, lo, hi)
		if lo != 0 || f.taken.Swap(true) {
			p.err = fmt.Errorf("stream: %s is not a regular file, so it can be read only once, from record 0 (asked for [%d, %d)): %w",
				f.name, lo, hi, errors.ErrUnsupported)
		}
		return p
	}
	p := newPackedRange(nil, f.name, f.l, lo, hi)
	off := f.l.offset(p.in.blk)
	p.r = io.NewSectionReader(f.f, off, int64(p.in.want))
	return p
}

// readerBuf is Reader reading through buf, which the caller may reuse
// once this PackedReader is done with it; a buffer shorter than a block
// and 8 bytes is replaced by a larger one.
func (f *PackedFile) readerBuf(lo, hi uint64, buf []byte) *PackedReader {
	p := f.Reader(lo, hi)
	p.in.buf = buf
	return p
}

// Digest returns the digest of records [lo, hi) of f, hi capped at
// Header().Updates, over their canonical 9-byte encodings (see
// PackedReader.Digest), calling progress as File.Digest does. It decodes
// and checks the records as it goes, and returns ctx's cause when ctx is
// done and the first error that stops the records.
func (f *PackedFile) Digest(ctx context.Context, lo, hi uint64, progress func(records uint64)) (Digest, error) {
	r := f.Reader(lo, hi)
	var d Digest
	for {
		if err := context.Cause(ctx); err != nil {
			return d, err
		}
		recs, _, err := r.ReadRaw()
		d = d.Update(recs)
		if progress != nil && len(recs) > 0 {
			progress(d.Records)
		}
		if err == io.EOF {
			return d, nil
		}
		if err != nil {
			return d, err
		}
	}
}

// Close closes the file. Readers must not be used after it.
func (f *PackedFile) Close() error { return f.f.Close() }
