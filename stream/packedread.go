package stream

import (
	"encoding/binary"
	"io"
	"unsafe"
)

// packedChunk is the most records a packedReader decodes before it
// hashes their canonical 9-byte encodings: 36 KiB of them, which stay in
// L1/L2 between the decode and the CRC.
const packedChunk = 4096

// packedReader decodes a packed stream for a Reader. It checks every block's CRC-32C
// before it returns any of its records, and every record: both ids are
// < Header().Vertices and Src != Dst (the type is one bit, always valid).
//
// packedReader is not safe for concurrent use.
type packedReader struct {
	r    io.Reader
	name string
	l    packedLayout

	in struct {
		buf      []byte // read blocks; 8 bytes past what is read are slack for the decoder's loads
		pos, end int    // unread bytes are buf[pos:end], from the start of block blk
		blk      uint64 // index of the block at buf[pos]
		want     uint64 // bytes of the range's blocks not yet read from r
	}
	cur struct {
		payload []byte // of the checked block being decoded, with slack
		k       uint64 // its index
		last    uint64 // index one past the last record to decode from it
	}
	next  uint64 // index of the next record to return
	limit uint64 // index one past the last record to return

	pending error  // read error, returned until a call returns it with no records
	err     error  // sticky: io.EOF or a *FormatError
	digest  Digest // of the canonical records Read returned, unless noHash
	// noHash is set for a Cursor's Reader of a regular file, which hashes
	// records when asked instead (Cursor.Digest).
	noHash bool
	buf    struct {
		raw     []byte // canonical encodings, packedChunk of them
		scratch []Update
	}
}

// newPackedRange returns a reader of records [lo, hi) from r, which is
// positioned at the start of the block holding lo.
func newPackedRange(r io.Reader, name string, l packedLayout, lo, hi uint64) *packedReader {
	p := &packedReader{r: r, name: name, l: l, next: lo, limit: hi}
	p.cur.last = lo
	if lo < hi {
		p.in.blk = lo / l.blockRecords
		p.in.want = uint64(l.offset((hi-1)/l.blockRecords+1) - l.offset(p.in.blk))
	}
	return p
}

// Header returns the stream's header.
func (p *packedReader) Header() Header { return p.l.h }

// Read decodes up to len(dst) updates into dst. See Source.Read. A block
// whose checksum fails, or a record that fails a check, ends the stream
// with a *FormatError naming the record index, the byte offset and the
// block; a stream that ends early ends with one wrapping io.ErrUnexpectedEOF
// and ErrTruncated. Records of a block are returned only once the whole
// block is read and checked. Errors of the underlying reader are returned
// once, as Reader.Read does.
func (p *packedReader) Read(dst []Update) (int, error) {
	n := 0
	for n < len(dst) {
		k := min(len(dst)-n, packedChunk)
		var got int
		var err error
		if p.noHash {
			got, err = p.decode(dst[n:], nil)
		} else {
			if p.buf.raw == nil {
				p.buf.raw = make([]byte, packedChunk*RecordBytes)
			}
			got, err = p.decode(dst[n:n+k], p.buf.raw)
			p.digest = p.digest.Update(p.buf.raw[:got*RecordBytes])
		}
		n += got
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, p.took(err)
		}
	}
	return n, nil
}

// ReadRaw is Read for a caller that wants the canonical 9-byte records
// (RecordBytes each; the slice is the Reader's and valid until the next
// call): it decodes the next checked records, at least one, and returns
// them and the index of the first. Unlike the binary Reader's ReadRaw,
// they have passed every check already. They are not hashed into Digest.
// At the end of the records, and for a bad, short or failing input, it
// returns none and the error Read would.
func (p *packedReader) ReadRaw() (recs []byte, first uint64, err error) {
	if p.buf.raw == nil {
		p.buf.raw = make([]byte, packedChunk*RecordBytes)
	}
	if p.buf.scratch == nil {
		p.buf.scratch = make([]Update, packedChunk)
	}
	first = p.next
	n, err := p.decode(p.buf.scratch, p.buf.raw)
	if n > 0 {
		return p.buf.raw[:n*RecordBytes], first, nil
	}
	return nil, first, p.took(err)
}

// carve takes the decoding buffers (buf.raw and buf.scratch) from the
// front of buf, a caller's buffer that outlives p (File.ReaderBuf), and
// returns the rest for the input, when buf is large enough to keep room for
// a block after them; otherwise it returns buf whole and ReadRaw allocates
// them. Without it, a reader of many ranges of a large stream (ingest's
// parallel readers claim one a million records) left 84 KiB of garbage a
// range, which a heap of large live gutters let pile up to about 9% of the
// sketch bytes on kron17 before a collection.
func (p *packedReader) carve(buf []byte) []byte {
	const rawBytes = packedChunk * RecordBytes // a multiple of 8: scratch stays aligned
	scratchBytes := packedChunk * int(unsafe.Sizeof(Update{}))
	if uint64(len(buf)) < uint64(rawBytes+scratchBytes)+p.l.blockBytes(0)+8 ||
		uintptr(unsafe.Pointer(&buf[rawBytes]))%unsafe.Alignof(Update{}) != 0 {
		return buf
	}
	p.buf.raw = buf[:rawBytes:rawBytes]
	// Update holds no pointers, so a byte buffer can hold Updates.
	p.buf.scratch = unsafe.Slice((*Update)(unsafe.Pointer(&buf[rawBytes])), packedChunk)
	return buf[rawBytes+scratchBytes:]
}

// took returns err, which ended a call that returned no records, and
// forgets it when it is a read error to report once.
func (p *packedReader) took(err error) error {
	if err != nil && err == p.pending {
		p.pending = nil
	}
	return err
}

// decode fills out with the next records, and raw (if not nil) with
// their canonical encodings, from the current block or the next ones. It
// returns how many it decoded and, when that is fewer than len(out), the
// error that stopped it.
func (p *packedReader) decode(out []Update, raw []byte) (int, error) {
	n := 0
	for n < len(out) {
		if p.err != nil {
			return n, p.err
		}
		if p.next == p.cur.last {
			if err := p.nextBlock(); err != nil {
				return n, err
			}
			continue
		}
		k := min(uint64(len(out)-n), p.cur.last-p.next)
		var rawPart []byte
		if raw != nil {
			rawPart = raw[n*RecordBytes:]
		}
		bit := (p.next - p.cur.k*p.l.blockRecords) * p.l.width
		good := unpack(&p.l, out[n:n+int(k)], rawPart, p.cur.payload, bit)
		n += good
		p.next += uint64(good)
		if good < int(k) {
			p.err = p.recordError(out[n], bit+uint64(good)*p.l.width)
			return n, p.err
		}
	}
	return n, nil
}

// unpack decodes records from p at bit offset bit into out and their
// canonical encodings into raw (if not nil), and returns the index of the
// first record that fails a check, or len(out). p must extend at least 8
// bytes past the last record's bits: the loads read whole words.
func unpack(l *packedLayout, out []Update, raw []byte, p []byte, bit uint64) int {
	if l.bits <= 28 {
		return unpackNarrow(l, out, raw, p, bit)
	}
	b, v := l.bits, l.h.Vertices
	m := uint64(1)<<b - 1
	for i := range out {
		// 1 + 2·b bits and a shift of up to 7 overflow one word: Dst
		// has a load of its own.
		x := binary.LittleEndian.Uint64(p[bit>>3:]) >> (bit & 7)
		db := bit + 1 + uint64(b)
		y := binary.LittleEndian.Uint64(p[db>>3:]) >> (db & 7)
		bit += l.width
		out[i] = Update{Type: UpdateType(x & 1), Edge: Edge{Src: uint32(x >> 1 & m), Dst: uint32(y & m)}}
		if !putRecord(raw, i, out[i], v) {
			return i // out[i] is the bad record, for the error
		}
	}
	return len(out)
}

// unpackNarrow is unpack for ids of at most 28 bits, whose records fit
// one 64-bit load after a shift of up to 7. Its shift of Dst is masked to
// 6 bits, so that the compiler adds no test for a shift of 64 or more: at
// 2^15 vertices it unpacks about 10% faster than the loop for wider ids.
func unpackNarrow(l *packedLayout, out []Update, raw []byte, p []byte, bit uint64) int {
	v, width := l.h.Vertices, l.width
	m := uint32(1)<<l.bits - 1
	sh := (l.bits + 1) & 63
	for i := range out {
		x := binary.LittleEndian.Uint64(p[bit>>3:]) >> (bit & 7)
		bit += width
		out[i] = Update{Type: UpdateType(x & 1), Edge: Edge{Src: uint32(x>>1) & m, Dst: uint32(x>>sh) & m}}
		if !putRecord(raw, i, out[i], v) {
			return i
		}
	}
	return len(out)
}

// putRecord reports whether u passes the checks of a stream of the given
// vertex count (ids in range, no self-loop) and, if it does and raw is
// not nil, writes its canonical encoding as record i of raw.
func putRecord(raw []byte, i int, u Update, vertices uint32) bool {
	if u.Src >= vertices || u.Dst >= vertices || u.Src == u.Dst {
		return false
	}
	if raw != nil {
		rec := raw[i*RecordBytes : i*RecordBytes+RecordBytes]
		rec[0] = uint8(u.Type)
		binary.LittleEndian.PutUint32(rec[1:5], u.Src)
		binary.LittleEndian.PutUint32(rec[5:9], u.Dst)
	}
	return true
}
