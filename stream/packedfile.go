package stream

import (
	"encoding/binary"
	"fmt"
	"io"
)

// packedReadBytes is the most a packedReader reads at once, unless one
// block is larger: about a megabyte per read system call, as the binary
// Reader's buffer.
const packedReadBytes = 1 << 20

// nextBlock makes the next block of the range current, once it is read
// whole and its checksum and padding are checked, or returns what ends
// the records: io.EOF, a *FormatError (kept for later calls) or a read
// error (returned until a call returns it with no records).
func (p *packedReader) nextBlock() error {
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
func (p *packedReader) blockError(k uint64, sentinel error, detail string) error {
	first := k * p.l.blockRecords
	p.err = &FormatError{Name: p.name, Index: int64(first), Offset: p.l.offset(k), Err: sentinel,
		Detail: fmt.Sprintf("block %d of %d, records [%d, %d): %s", k, p.l.blocks(), first, first+p.l.records(k), detail)}
	return p.err
}

// recordError returns the *FormatError for u, the bad record p.next at
// bit offset bit of the current block's payload.
func (p *packedReader) recordError(u Update, bit uint64) error {
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
func (p *packedReader) fill(size int) (eof bool) {
	if p.in.want == 0 {
		return true // the range's bytes are all read: a BUG, reported as truncation
	}
	if len(p.in.buf) < size+8 {
		// A buffer of the caller's (File.ReaderBuf) is kept if a block
		// fits.
		grown := make([]byte, max(size, int(min(packedReadBytes, p.in.want)))+8)
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
// atEnd does.
func (p *packedReader) atEnd() {
	if p.limit < p.l.h.Updates {
		p.err = io.EOF
		return
	}
	p.err, p.pending = endOf(p.r, p.name, p.l.h, p.l.offset(p.l.blocks()))
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
	blocks := fmt.Sprintf("%d blocks", l.blocks())
	if l.blocks() == 1 {
		blocks = "1 block"
	}
	e.Detail = fmt.Sprintf("file is %d bytes, header promises %s in %s = %d bytes",
		size, UpdateCount(l.h.Updates), blocks, want)
	return e
}
