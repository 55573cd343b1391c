package stream

import (
	"encoding/binary"
	"io"
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
	digest  Digest // of the canonical records Read returned
	raw     []byte // their canonical encodings, packedChunk of them
	scratch []Update
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

// Digest returns the digest of the canonical 9-byte encodings of the
// records Read has returned, from the first of the Reader's range on: the
// digest a binary Reader gives for the same records, so that a checkpoint
// taken on a binary stream checks against its packed copy and back.
// Records ReadRaw returned are not hashed.
func (p *packedReader) Digest() Digest { return p.digest }

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
		if p.raw == nil {
			p.raw = make([]byte, packedChunk*RecordBytes)
		}
		got, err := p.decode(dst[n:n+k], p.raw)
		p.digest = p.digest.Update(p.raw[:got*RecordBytes])
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
	if p.raw == nil {
		p.raw = make([]byte, packedChunk*RecordBytes)
	}
	if p.scratch == nil {
		p.scratch = make([]Update, packedChunk)
	}
	first = p.next
	n, err := p.decode(p.scratch, p.raw)
	if n > 0 {
		return p.raw[:n*RecordBytes], first, nil
	}
	return nil, first, p.took(err)
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
	b, v := l.bits, l.h.Vertices
	m := uint64(1)<<b - 1
	for i := range out {
		x := binary.LittleEndian.Uint64(p[bit>>3:]) >> (bit & 7)
		y := x >> (b + 1)
		if b > 28 { // 1 + 2·b bits and a shift of up to 7 overflow one word
			db := bit + 1 + uint64(b)
			y = binary.LittleEndian.Uint64(p[db>>3:]) >> (db & 7)
		}
		bit += l.width
		t, s, d := uint8(x&1), uint32(x>>1&m), uint32(y&m)
		out[i] = Update{Type: UpdateType(t), Edge: Edge{Src: s, Dst: d}}
		if s >= v || d >= v || s == d {
			return i // out[i] is the bad record, for the error
		}
		if raw != nil {
			rec := raw[i*RecordBytes : i*RecordBytes+RecordBytes]
			rec[0] = t
			binary.LittleEndian.PutUint32(rec[1:5], s)
			binary.LittleEndian.PutUint32(rec[5:9], d)
		}
	}
	return len(out)
}
