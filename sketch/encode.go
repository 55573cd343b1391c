package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// ErrEncoding is wrapped by the decoders for malformed input.
var ErrEncoding = errors.New("sketch: malformed encoding")

// deltaHeaderBytes is the delta header: vertex uint32, bucket count uint32.
const deltaHeaderBytes = 8

// AppendDelta appends the binary encoding of vertex v's delta to b and
// returns the extended slice:
//
//	vertex uint32 | buckets uint32 | buckets × (Alpha uint64, Gamma uint64)
//
// all little-endian: every bucket, zero or not (the wire between main
// node and workers sends only the non-zero ones; distributor/wire.go).
func AppendDelta(b []byte, v uint32, delta []Bucket) []byte {
	b = binary.LittleEndian.AppendUint32(b, v)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(delta)))
	return append(b, bucketBytes(delta)...)
}

// DecodeDelta decodes one delta from the front of b into dst, which must
// hold p.BucketsPerVertex() buckets, and returns the vertex and the bytes
// after it. It returns an error wrapping ErrEncoding, with the byte offset
// in b, when b is too short, the bucket count differs from p's geometry or
// the vertex is out of range; it allocates nothing.
func (p Params) DecodeDelta(dst []Bucket, b []byte) (v uint32, rest []byte, err error) {
	per := p.BucketsPerVertex()
	if len(b) < deltaHeaderBytes {
		return 0, b, fmt.Errorf("%w: delta header needs %d bytes, have %d", ErrEncoding, deltaHeaderBytes, len(b))
	}
	v = binary.LittleEndian.Uint32(b)
	n := binary.LittleEndian.Uint32(b[4:])
	switch {
	case v >= p.vertices:
		return 0, b, fmt.Errorf("%w: delta for vertex %d, graph has %d", ErrEncoding, v, p.vertices)
	case int64(n) != int64(per):
		return 0, b, fmt.Errorf("%w: delta of %d buckets, geometry has %d", ErrEncoding, n, per)
	case len(b)-deltaHeaderBytes < per*BucketBytes:
		return 0, b, fmt.Errorf("%w: delta needs %d bytes, have %d", ErrEncoding,
			deltaHeaderBytes+per*BucketBytes, len(b))
	case len(dst) < per:
		return 0, b, fmt.Errorf("sketch: DecodeDelta: dst holds %d buckets, need %d", len(dst), per)
	}
	copy(bucketBytes(dst[:per]), b[deltaHeaderBytes:])
	return v, b[deltaHeaderBytes+per*BucketBytes:], nil
}

// tableMagic starts a table checkpoint.
const tableMagic = "SKCCTBL1"

// tableHeaderBytes: magic, vertices u32, rows u32, columns u32, reserved
// u32, factor f64, seed u64.
const tableHeaderBytes = 8 + 4*4 + 8 + 8

// WriteTo writes a checkpoint of the table to w:
//
//	"SKCCTBL1" | vertices u32 | rows u32 | columns u32 | 0 u32 |
//	factor f64 | seed u64 | Vertices·BucketsPerVertex buckets
//
// little-endian. It returns the bytes written.
func (t *Table) WriteTo(w io.Writer) (int64, error) {
	h := make([]byte, 0, tableHeaderBytes)
	h = append(h, tableMagic...)
	h = binary.LittleEndian.AppendUint32(h, t.p.vertices)
	h = binary.LittleEndian.AppendUint32(h, uint32(t.p.rows))
	h = binary.LittleEndian.AppendUint32(h, uint32(t.p.columns))
	h = binary.LittleEndian.AppendUint32(h, 0)
	h = binary.LittleEndian.AppendUint64(h, math.Float64bits(t.p.factor))
	h = binary.LittleEndian.AppendUint64(h, t.p.seed)
	n, err := w.Write(h)
	total := int64(n)
	if err != nil {
		return total, fmt.Errorf("sketch: cannot write table header: %w", err)
	}
	// Write in 1 MiB pieces so a huge table needs no second copy.
	body := bucketBytes(t.buckets)
	for len(body) > 0 {
		k := min(len(body), 1<<20)
		n, err := w.Write(body[:k])
		total += int64(n)
		if err != nil {
			return total, fmt.Errorf("sketch: cannot write table at byte %d: %w", total, err)
		}
		body = body[k:]
	}
	return total, nil
}

// ReadTable reads a checkpoint written by WriteTo. It returns an error
// wrapping ErrEncoding for a bad magic, a geometry that NewParams would not
// produce, or a short body (io.ErrUnexpectedEOF also wrapped).
func ReadTable(r io.Reader) (*Table, error) {
	var h [tableHeaderBytes]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("%w: table header: %w", ErrEncoding, err)
	}
	if string(h[:8]) != tableMagic {
		return nil, fmt.Errorf("%w: bad table magic %q", ErrEncoding, h[:8])
	}
	v := binary.LittleEndian.Uint32(h[8:])
	rows := binary.LittleEndian.Uint32(h[12:])
	cols := binary.LittleEndian.Uint32(h[16:])
	factor := math.Float64frombits(binary.LittleEndian.Uint64(h[24:]))
	seed := binary.LittleEndian.Uint64(h[32:])
	p, err := NewParams(v, factor, seed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEncoding, err)
	}
	if p.rows != int(rows) || p.columns != int(cols) {
		return nil, fmt.Errorf("%w: table geometry %d×%d, parameters give %d×%d",
			ErrEncoding, rows, cols, p.rows, p.columns)
	}
	t := NewTable(p)
	if _, err := io.ReadFull(r, bucketBytes(t.buckets)); err != nil {
		return nil, fmt.Errorf("%w: table body: %w", ErrEncoding, err)
	}
	return t, nil
}
