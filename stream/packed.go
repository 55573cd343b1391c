package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
)

// PackedHeaderBytes is the size of a packed stream's header. See the
// package doc for its layout.
const PackedHeaderBytes = 32

// packedMagic follows the zero Vertices word that opens a packed header.
var packedMagic = [4]byte{'S', 'C', 'P', 'K'}

// packedVersion is the only layout version this package reads and writes.
const packedVersion = 1

// packedBlockRecords is the number of records per block the PackedWriter
// writes: at kron17 a block is about 280 KiB, small enough that a reader
// seeking to a record decodes at most that much in vain, large enough that
// the 4-byte checksum costs 0.00006 bytes per update.
const packedBlockRecords = 1 << 16

// maxBlockRecords bounds a header's records per block so that one block, which
// a Reader buffers whole, stays under 17 MiB (65-bit records).
const maxBlockRecords = 1 << 21

// maxPackedUpdates bounds a packed header's update count so that the file
// size it implies fits an int64 (65 bits per record at most).
const maxPackedUpdates = 1 << 56

var (
	// ErrChecksum is returned for a packed header or block whose CRC-32C
	// does not match its bytes.
	ErrChecksum = errors.New("stream: checksum mismatch")
	// ErrPackedHeader is returned for a packed header with a bad magic
	// word, an unknown version, a bad block size or non-zero reserved bits.
	ErrPackedHeader = errors.New("stream: bad packed header")
)

// IsPacked reports whether b, the first bytes of a stream, open a packed
// stream: a zero Vertices word (invalid in the binary format) followed by
// the magic word. It needs at least 8 bytes and says false for fewer.
func IsPacked(b []byte) bool {
	return len(b) >= 8 && binary.LittleEndian.Uint32(b) == 0 && [4]byte(b[4:8]) == packedMagic
}

// IDBits returns the width of a vertex id in a packed stream of the given
// vertex count: ⌈log2 vertices⌉, at least 1.
func IDBits(vertices uint32) uint {
	return uint(max(1, bits.Len32(vertices-1)))
}

// packedLayout is where everything sits in a packed stream of one header.
type packedLayout struct {
	h            Header
	bits         uint   // of one vertex id
	width        uint64 // of one record, in bits: 1 + 2·bits
	blockRecords uint64 // per block, all but the last
}

func newLayout(h Header, blockRecords uint64) packedLayout {
	b := IDBits(h.Vertices)
	return packedLayout{h: h, bits: b, width: 1 + 2*uint64(b), blockRecords: blockRecords}
}

// blocks returns the number of blocks.
func (l *packedLayout) blocks() uint64 { return (l.h.Updates + l.blockRecords - 1) / l.blockRecords }

// records returns the number of records of block k.
func (l *packedLayout) records(k uint64) uint64 {
	return min(l.blockRecords, l.h.Updates-k*l.blockRecords)
}

// payloadBytes returns the size of the packed bits of n records.
func (l *packedLayout) payloadBytes(n uint64) uint64 { return (n*l.width + 7) / 8 }

// blockBytes returns the size of block k: its checksum and its payload.
func (l *packedLayout) blockBytes(k uint64) uint64 { return 4 + l.payloadBytes(l.records(k)) }

// offset returns the byte offset of block k (of the end, for k = blocks()).
// Every block before the last holds blockRecords records, a multiple of 8,
// so they all have the same size and the index is this formula.
func (l *packedLayout) offset(k uint64) int64 {
	full := 4 + l.payloadBytes(l.blockRecords)
	if k < l.blocks() {
		return PackedHeaderBytes + int64(k*full)
	}
	k = l.blocks()
	if k == 0 {
		return PackedHeaderBytes
	}
	return PackedHeaderBytes + int64((k-1)*full+l.blockBytes(k-1))
}

// blockCRC returns the checksum of block k with payload p: the CRC-32C of
// k (uint64, little-endian) and then p, so that a block copied to another
// place of the file does not pass.
func blockCRC(k uint64, p []byte) uint32 {
	var kb [8]byte
	binary.LittleEndian.PutUint64(kb[:], k)
	return crc32.Update(crc32.Update(0, castagnoli, kb[:]), castagnoli, p)
}

// appendPackedHeader appends the 32-byte packed header of l to b.
func appendPackedHeader(b []byte, l packedLayout) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = append(b, packedMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, packedVersion)
	b = binary.LittleEndian.AppendUint32(b, l.h.Vertices)
	b = binary.LittleEndian.AppendUint64(b, l.h.Updates)
	b = binary.LittleEndian.AppendUint32(b, uint32(l.blockRecords))
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// decodePackedHeader checks the 32 bytes of hb, a packed header, and
// returns its layout, or a *FormatError for the header.
func decodePackedHeader(hb []byte, name string) (packedLayout, error) {
	bad := func(sentinel error, format string, args ...any) (packedLayout, error) {
		return packedLayout{}, &FormatError{Name: name, Index: -1, Offset: 0, Err: sentinel,
			Detail: fmt.Sprintf(format, args...)}
	}
	if !IsPacked(hb) {
		return bad(ErrPackedHeader, "no packed magic word")
	}
	if v := binary.LittleEndian.Uint32(hb[8:12]); v != packedVersion {
		return bad(ErrPackedHeader, "version %d, this reader knows version %d", v, packedVersion)
	}
	stored, computed := binary.LittleEndian.Uint32(hb[28:32]), crc32.Checksum(hb[:28], castagnoli)
	if stored != computed {
		return bad(ErrChecksum, "header CRC-32C %08x, computed %08x", stored, computed)
	}
	h := Header{Vertices: binary.LittleEndian.Uint32(hb[12:16]), Updates: binary.LittleEndian.Uint64(hb[16:24])}
	br := uint64(binary.LittleEndian.Uint32(hb[24:28]))
	switch {
	case h.Vertices < 2:
		return bad(ErrNoVertices, "vertices %d", h.Vertices)
	case br == 0 || br%8 != 0 || br > maxBlockRecords:
		return bad(ErrPackedHeader, "block of %d records, want a multiple of 8 in [8, %d]", br, maxBlockRecords)
	case h.Updates > maxPackedUpdates:
		return bad(ErrPackedHeader, "header promises %s, more than 2^56", UpdateCount(h.Updates))
	}
	return newLayout(h, br), nil
}

// PackedWriter writes a packed stream (see the package doc). It writes
// the header first, each block once it is full, and checks at Close that
// exactly Header.Updates updates were written.
//
// PackedWriter is not safe for concurrent use.
type PackedWriter struct {
	w     *bufio.Writer
	l     packedLayout
	n     uint64 // updates written
	block []byte // the block being filled: 4 bytes for its checksum, then bits
	acc   uint64 // bits not yet in block, from bit 0
	nacc  uint   // how many, < 8 between updates
	err   error
}

// NewPackedWriter writes the packed header of h to w and returns a
// PackedWriter for its updates. Writes are buffered; Close flushes. It
// returns an error wrapping ErrNoVertices for fewer than 2 vertices.
func NewPackedWriter(w io.Writer, h Header) (*PackedWriter, error) {
	return newPackedWriterBlock(w, h, packedBlockRecords)
}

func newPackedWriterBlock(w io.Writer, h Header, blockRecords uint64) (*PackedWriter, error) {
	l := newLayout(h, blockRecords)
	if h.Vertices < 2 || h.Updates > maxPackedUpdates {
		return nil, fmt.Errorf("stream: cannot write a packed stream of %d vertices and %s: %w",
			h.Vertices, UpdateCount(h.Updates), ErrNoVertices)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.Write(appendPackedHeader(nil, l)); err != nil {
		return nil, fmt.Errorf("stream: cannot write header: %w", err)
	}
	block := make([]byte, 4, 4+l.payloadBytes(min(blockRecords, h.Updates))+8)
	return &PackedWriter{w: bw, l: l, block: block}, nil
}

// put appends the k low bits of v, k <= 33, to the block.
func (w *PackedWriter) put(v uint64, k uint) {
	w.acc |= v << w.nacc
	w.nacc += k
	for w.nacc >= 8 {
		w.block = append(w.block, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// Write appends one update. It returns an error, without writing, for an
// update the Writer would reject (type, range, self-loop) or one past the
// header's count, and the error of the underlying writer, which ends the
// PackedWriter.
func (w *PackedWriter) Write(u Update) error {
	if w.err != nil {
		return w.err
	}
	switch h := w.l.h; {
	case u.Type > Delete:
		return fmt.Errorf("stream: cannot write update %d: %w (type %d)", w.n, ErrBadUpdateType, u.Type)
	case u.Src >= h.Vertices || u.Dst >= h.Vertices:
		return fmt.Errorf("stream: cannot write update %d: %w (edge (%d,%d), vertices %d)",
			w.n, ErrVertexRange, u.Src, u.Dst, h.Vertices)
	case u.Src == u.Dst:
		return fmt.Errorf("stream: cannot write update %d: %w (edge (%d,%d))", w.n, ErrSelfLoop, u.Src, u.Dst)
	case w.n >= h.Updates:
		return fmt.Errorf("stream: cannot write update %d: %w (header promises %d)", w.n, ErrTrailing, h.Updates)
	}
	w.put(uint64(u.Type)|uint64(u.Src)<<1, 1+w.l.bits)
	w.put(uint64(u.Dst), w.l.bits)
	w.n++
	if w.n%w.l.blockRecords == 0 || w.n == w.l.h.Updates {
		return w.flushBlock()
	}
	return nil
}

// flushBlock pads the block to a byte, checksums it and writes it.
func (w *PackedWriter) flushBlock() error {
	if w.nacc > 0 {
		w.block = append(w.block, byte(w.acc))
		w.acc, w.nacc = 0, 0
	}
	k := (w.n - 1) / w.l.blockRecords
	binary.LittleEndian.PutUint32(w.block[:4], blockCRC(k, w.block[4:]))
	if _, err := w.w.Write(w.block); err != nil {
		w.err = fmt.Errorf("stream: cannot write block %d (updates [%d, %d)): %w",
			k, k*w.l.blockRecords, w.n, err)
		return w.err
	}
	w.block = w.block[:4]
	return nil
}

// Close flushes buffered blocks. It returns an error wrapping ErrTruncated
// if fewer updates were written than the header promised. It does not
// close the underlying writer.
func (w *PackedWriter) Close() error {
	if w.err != nil {
		return w.err
	}
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("stream: cannot flush: %w", err)
	}
	if w.n != w.l.h.Updates {
		return fmt.Errorf("stream: %w: wrote %d updates, header promises %d", ErrTruncated, w.n, w.l.h.Updates)
	}
	return nil
}

// Format names one of the two binary stream formats.
type Format uint8

const (
	// FormatBinary is the GraphZeppelin format: 12-byte header, 9-byte
	// records. It is the default.
	FormatBinary Format = iota
	// FormatPacked is the packed format: checksummed blocks of records
	// of 1 + 2·IDBits(Vertices) bits.
	FormatPacked
)

// String returns "binary" or "packed".
func (f Format) String() string {
	switch f {
	case FormatBinary:
		return "binary"
	case FormatPacked:
		return "packed"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// UpdateWriter writes the updates of a stream whose header it has
// written: *Writer and *PackedWriter are UpdateWriters.
type UpdateWriter interface {
	// Write appends one update.
	Write(u Update) error
	// Close flushes and checks the count against the header.
	Close() error
}

// NewFormatWriter returns NewWriter(w, h) for FormatBinary and
// NewPackedWriter(w, h) for FormatPacked.
func NewFormatWriter(w io.Writer, h Header, f Format) (UpdateWriter, error) {
	switch f {
	case FormatBinary:
		return NewWriter(w, h)
	case FormatPacked:
		return NewPackedWriter(w, h)
	}
	return nil, fmt.Errorf("stream: cannot write format %v", f)
}
