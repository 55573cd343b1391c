package distributor

// The payloads of batches and deltas frames (doc.go draws them): a batch
// goes out as the sorted set of neighbour ids that occur an odd number of
// times in it, as gaps or as a bitmap (the shorter, or the bitmap when it
// takes at most bitmapSlack bytes per id); a delta comes
// back as its non-zero buckets behind one row bitmap per column.
//
// Sending the odd-count set is exact: a sketch is linear over GF(2), so an
// edge index XORed in twice leaves every bucket as it was, and the delta of
// the set equals the delta of the batch bucket for bucket
// (TestBatchParityDeltaEqual).

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"sketchcc/gutters"
	"sketchcc/sketch"
)

// The first byte of an encoded batch says its form.
const (
	// idsGaps: uvarint of the first id, then for each next id the uvarint
	// of its distance to the previous one, minus 1.
	idsGaps byte = 0
	// idsBitmap: uvarint of a byte index b, then bytes in which bit j
	// (least significant first) of byte i marks id 8·(b+i) + j.
	idsBitmap byte = 1
)

// bitmapSlack is how many bytes per id the bitmap form may take before
// the encoder tries the gaps: a dense batch (at least one id in 16
// vertices of its range) goes as a bitmap even when its gaps would be up
// to half as long. At kron15's geometry that is 3.1 bytes per update out
// instead of 2.0, for about 4 ns less of the main node's CPU per update
// (BenchmarkWire).
const bitmapSlack = 2

// maxBatchBytes bounds the encoding of a batch of n ids, in bytes: the
// form byte and n uvarints of at most 5 bytes. The bitmap form is only
// sent when it is shorter than the gaps or at most 1 + bitmapSlack·n.
func maxBatchBytes(n int) int { return 1 + 5*n }

// bitmapMaxVertices bounds the graphs on which batchEncoder cancels pairs
// in a bitmap of one bit per vertex (at most 512 KiB); above it, it sorts.
const bitmapMaxVertices = 1 << 22

// batchEncoder encodes batches for one graph. Not safe for concurrent use:
// each distributor's writer goroutine owns one.
type batchEncoder struct {
	vertices uint32
	// bits has one bit per vertex, all zero between calls; nil until
	// first needed.
	bits []uint64
	// ids holds the sorted odd-count set of the batch being encoded.
	ids []uint32
	// wide holds a 16-bit batch's ids widened, for the main node to
	// sketch it itself (Pool.take).
	wide []uint32
}

func newBatchEncoder(vertices uint32) *batchEncoder {
	return &batchEncoder{vertices: vertices}
}

// append appends to dst the encoding of the neighbour ids that occur an
// odd number of times in neighbors (each below the encoder's vertex
// count), and returns the extended slice and how many ids it holds.
func (e *batchEncoder) append(dst []byte, neighbors []uint32) ([]byte, int) {
	return appendIDs(e, dst, neighbors)
}

// appendBatch is append for the neighbour ids of b, 32- or 16-bit.
func (e *batchEncoder) appendBatch(dst []byte, b gutters.Batch) ([]byte, int) {
	if b.Narrow != nil {
		return appendIDs(e, dst, b.Narrow)
	}
	return appendIDs(e, dst, b.Neighbors)
}

// neighborID is the type of the neighbour ids of a batch.
type neighborID interface{ uint16 | uint32 }

// appendIDs is append for ids of either width: a 16-bit batch encodes to
// the same bytes as its ids widened (TestBatchRoundTrip).
func appendIDs[T neighborID](e *batchEncoder, dst []byte, neighbors []T) ([]byte, int) {
	// Toggling bits costs one word per id, then a scan of the words
	// between the smallest and the largest id; sorting costs about
	// log2(n) comparisons per id. Take the bitmap when its words are
	// few next to the batch.
	if e.vertices <= bitmapMaxVertices && int(e.vertices/64) <= 16*len(neighbors) {
		return appendFromBits(e, dst, neighbors)
	}
	e.ids = e.ids[:0]
	for _, u := range neighbors {
		e.ids = append(e.ids, uint32(u))
	}
	slices.Sort(e.ids)
	e.ids = oddCount(e.ids)
	return appendSorted(dst, e.ids), len(e.ids)
}

// oddCount keeps, from sorted ids, one copy of each id that occurs an odd
// number of times, in place.
func oddCount(ids []uint32) []uint32 {
	out := ids[:0]
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		if (j-i)%2 == 1 {
			out = append(out, ids[i])
		}
		i = j
	}
	return out
}

func appendFromBits[T neighborID](e *batchEncoder, dst []byte, neighbors []T) ([]byte, int) {
	if e.bits == nil {
		e.bits = make([]uint64, (uint64(e.vertices)+63)/64)
	}
	b := e.bits
	lo, hi := uint32(0), e.vertices-1
	if len(b) <= 2*len(neighbors) {
		// Dense: the scans below cover nearly every word anyway, so
		// the toggles skip tracking the smallest and largest id.
		for _, u := range neighbors {
			b[u/64] ^= 1 << (u % 64)
		}
	} else {
		lo, hi = uint32(neighbors[0]), uint32(neighbors[0])
		for _, u := range neighbors {
			b[u/64] ^= 1 << (u % 64)
			lo = min(lo, uint32(u))
			hi = max(hi, uint32(u))
		}
	}
	words := b[lo/64 : hi/64+1]
	defer clear(words)
	k := 0
	for _, w := range words {
		k += bits.OnesCount64(w)
	}
	if k == 0 {
		return append(dst, idsGaps), 0
	}
	// Trim the zero bytes at both ends: pairs may have cancelled there.
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 8*len(words))
	first, last := 0, len(raw)-1
	for raw[first] == 0 {
		first++
	}
	for raw[last] == 0 {
		last--
	}
	base := uint64(lo/64)*8 + uint64(first)
	bitmap := raw[first : last+1]
	size := bitmapBytes(base, len(bitmap))
	// Each gap takes at least one byte, so a bitmap no longer than the
	// ids are many is the shorter form. Up to bitmapSlack bytes per id it
	// is still sent without encoding the gaps to compare: walking the
	// set bits costs the main node more than the bytes cost the wire.
	if size <= 1+bitmapSlack*k {
		return appendBitmap(dst, base, bitmap), k
	}
	start := len(dst)
	dst = append(dst, idsGaps)
	next := uint32(0) // the smallest value the next id may take
	for i, w := range words {
		for w != 0 {
			u := (lo/64+uint32(i))*64 + uint32(bits.TrailingZeros64(w))
			w &= w - 1
			if d := u - next; d < 0x80 {
				dst = append(dst, byte(d))
			} else {
				dst = binary.AppendUvarint(dst, uint64(d))
			}
			next = u + 1
		}
	}
	if size <= len(dst)-start {
		return appendBitmap(dst[:start], base, bitmap), k
	}
	return dst, k
}

// appendBitmap appends the bitmap form: bitmap holds the bits of ids
// 8·base onward.
func appendBitmap(dst []byte, base uint64, bitmap []byte) []byte {
	dst = append(dst, idsBitmap)
	dst = binary.AppendUvarint(dst, base)
	return append(dst, bitmap...)
}

// bitmapBytes is the size of the bitmap form from byte index base over n
// bytes.
func bitmapBytes(base uint64, n int) int {
	return 1 + uvarintBytes(base) + n
}

func uvarintBytes(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// appendSorted appends the encoding of ids, which are strictly
// increasing, that the bitmap path chooses: the bitmap when it takes at
// most bitmapSlack bytes per id or is no longer than the gaps.
func appendSorted(dst []byte, ids []uint32) []byte {
	start := len(dst)
	dst = append(dst, idsGaps)
	next := uint32(0) // the smallest value the next id may take
	for _, u := range ids {
		if d := u - next; d < 0x80 {
			dst = append(dst, byte(d))
		} else {
			dst = binary.AppendUvarint(dst, uint64(d))
		}
		next = u + 1
	}
	if len(ids) == 0 {
		return dst
	}
	base := uint64(ids[0] / 8)
	n := int(ids[len(ids)-1]/8) - int(base) + 1
	if size := bitmapBytes(base, n); size > len(dst)-start && size > 1+bitmapSlack*len(ids) {
		return dst
	}
	dst = appendBitmap(dst[:start], base, make([]byte, n))
	off := len(dst) - n - int(base)
	for _, u := range ids {
		dst[off+int(u/8)] |= 1 << (u % 8)
	}
	return dst
}

// decodeBatch appends to dst the n neighbour ids of vertex v encoded in b
// (one whole encoded batch) and returns the extended slice. The ids must
// be below vertices, differ from v and be strictly increasing, and b must
// hold exactly n of them; otherwise it returns an error wrapping ErrFrame.
// It appends at most n ids, so a caller that reserved n allocates nothing.
func decodeBatch(dst []uint32, b []byte, n int, v, vertices uint32) ([]uint32, error) {
	if len(b) == 0 {
		return dst, fmt.Errorf("%w: empty batch encoding", ErrFrame)
	}
	start := len(dst)
	switch b[0] {
	case idsGaps:
		pos, next := 1, uint64(0)
		for range n {
			var d uint64
			if pos < len(b) && b[pos] < 0x80 {
				d = uint64(b[pos])
				pos++
			} else {
				x, k := binary.Uvarint(b[pos:])
				if k <= 0 {
					return dst, fmt.Errorf("%w: batch id %d of %d: bad uvarint at byte %d", ErrFrame, len(dst)-start, n, pos)
				}
				d, pos = x, pos+k
			}
			u := next + d
			if d >= uint64(vertices) || u >= uint64(vertices) || u == uint64(v) {
				return dst, fmt.Errorf("%w: batch for vertex %d holds neighbour %d (%d vertices)", ErrFrame, v, next+d, vertices)
			}
			dst = append(dst, uint32(u))
			next = u + 1
		}
		if pos != len(b) {
			return dst, fmt.Errorf("%w: %d bytes after the %d ids of a batch", ErrFrame, len(b)-pos, n)
		}
		return dst, nil
	case idsBitmap:
		return decodeBitmap(dst, b[1:], n, v, vertices)
	}
	return dst, fmt.Errorf("%w: batch encoding of form %d", ErrFrame, b[0])
}

// decodeBitmap is decodeBatch for the bitmap form; b follows the form
// byte. It checks the whole bitmap first, then writes the ids without a
// check per id.
func decodeBitmap(dst []uint32, b []byte, n int, v, vertices uint32) ([]uint32, error) {
	base, k := binary.Uvarint(b)
	if k <= 0 || base >= (uint64(vertices)+7)/8 {
		return dst, fmt.Errorf("%w: batch bitmap from byte %d (%d vertices)", ErrFrame, base, vertices)
	}
	bm := b[k:]
	count := 0
	i := 0
	for ; i+8 <= len(bm); i += 8 {
		count += bits.OnesCount64(binary.LittleEndian.Uint64(bm[i:]))
	}
	for _, c := range bm[i:] {
		count += bits.OnesCount8(c)
	}
	if count != n {
		return dst, fmt.Errorf("%w: batch bitmap holds %d ids, header says %d", ErrFrame, count, n)
	}
	if n == 0 {
		return dst, nil
	}
	last := len(bm) - 1
	for bm[last] == 0 {
		last--
	}
	if top := (base+uint64(last))*8 + 7 - uint64(bits.LeadingZeros8(bm[last])); top >= uint64(vertices) {
		return dst, fmt.Errorf("%w: batch bitmap for vertex %d holds neighbour %d (%d vertices)", ErrFrame, v, top, vertices)
	}
	if at := uint64(v)/8 - base; uint64(v) >= 8*base && at < uint64(len(bm)) && bm[at]>>(v%8)&1 == 1 {
		return dst, fmt.Errorf("%w: batch bitmap for vertex %d holds neighbour %d", ErrFrame, v, v)
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	j := 0
	first := uint32(base * 8) // below vertices, checked above
	i = 0
	for ; i+8 <= len(bm); i += 8 {
		w := binary.LittleEndian.Uint64(bm[i:])
		for w != 0 {
			out[j] = first + uint32(8*i+bits.TrailingZeros64(w))
			j++
			w &= w - 1
		}
	}
	for ; i < len(bm); i++ {
		for c := bm[i]; c != 0; c &= c - 1 {
			out[j] = first + uint32(8*i+bits.TrailingZeros8(c))
			j++
		}
	}
	return dst, nil
}

// deltaCodec encodes and decodes deltas for one sketch geometry:
//
//	uvarint vertex | det uint8 | columns × uvarint row bitmap | the non-zero buckets
//
// det is 1 when the deterministic bucket is non-zero; bit r of column c's
// bitmap when its bucket of row r is. The buckets follow in sketch order
// (the deterministic one, then column by column, row by row), 16 bytes
// each, Alpha then Gamma, little-endian. Not safe for concurrent use: each
// writer or reader goroutine owns one.
type deltaCodec struct {
	vertices      uint32
	rows, columns int
	masks         []uint64 // per column, the rows of the delta being coded
	tops          []uint8  // nextRows: per column, rows up to the highest non-zero one
	det           bool     // parse: the delta has its deterministic bucket
	body          []byte   // parse: the delta's buckets, aliasing the frame
}

func newDeltaCodec(p sketch.Params) *deltaCodec {
	return &deltaCodec{vertices: p.Vertices(), rows: p.Rows(), columns: p.Columns(),
		masks: make([]uint64, p.Columns()), tops: make([]uint8, p.Columns())}
}

// minBytes and maxBytes bound the encoding of one delta.
func (dc *deltaCodec) minBytes() int { return 2 + dc.columns }
func (dc *deltaCodec) maxBytes() int {
	return binary.MaxVarintLen32 + 1 + dc.columns*uvarintBytes(1<<dc.rows-1) +
		(1+dc.rows*dc.columns)*sketch.BucketBytes
}

// append appends the encoding of vertex v's delta (BucketsPerVertex
// buckets) to dst and returns the extended slice.
func (dc *deltaCodec) append(dst []byte, v uint32, delta []sketch.Bucket) []byte {
	dst = binary.AppendUvarint(dst, uint64(v))
	if delta[0] != (sketch.Bucket{}) {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	for c := range dc.columns {
		var m uint64
		for r, b := range delta[1+c*dc.rows : 1+(c+1)*dc.rows] {
			if b.Alpha|b.Gamma != 0 {
				m |= 1 << r
			}
		}
		dc.masks[c] = m
		dst = binary.AppendUvarint(dst, m)
	}
	if delta[0] != (sketch.Bucket{}) {
		dst = append(dst, sketch.AsBytes(delta[:1])...)
	}
	for c, m := range dc.masks {
		col := delta[1+c*dc.rows:]
		for m != 0 {
			r := bits.TrailingZeros64(m)
			run := bits.TrailingZeros64(^(m >> r))
			dst = append(dst, sketch.AsBytes(col[r:r+run])...)
			m &^= (1<<run - 1) << r
		}
	}
	return dst
}

// parse checks the delta at the front of b and keeps its row bitmaps and
// buckets for xorInto; it returns the delta's vertex and the bytes after
// it. A vertex out of range, a row bitmap with bits past the rows, or too
// few bytes is an error wrapping ErrFrame. The kept buckets alias b; it
// allocates nothing.
func (dc *deltaCodec) parse(b []byte) (v uint32, rest []byte, err error) {
	x, k := binary.Uvarint(b)
	if k <= 0 || x >= uint64(dc.vertices) {
		return 0, b, fmt.Errorf("%w: delta vertex %d (bytes %d, %d vertices)", ErrFrame, x, k, dc.vertices)
	}
	pos := k
	if pos >= len(b) || b[pos] > 1 {
		return 0, b, fmt.Errorf("%w: delta for vertex %d: bad deterministic-bucket flag", ErrFrame, x)
	}
	dc.det = b[pos] == 1
	pos++
	count := int(b[pos-1])
	for c := range dc.columns {
		m, k := binary.Uvarint(b[pos:])
		if k <= 0 || dc.rows < 64 && m>>dc.rows != 0 {
			return 0, b, fmt.Errorf("%w: delta for vertex %d: column %d row bitmap %#x (%d rows)", ErrFrame, x, c, m, dc.rows)
		}
		dc.masks[c] = m
		count += bits.OnesCount64(m)
		pos += k
	}
	need := count * sketch.BucketBytes
	if len(b)-pos < need {
		return 0, b, fmt.Errorf("%w: delta for vertex %d needs %d bytes of buckets, have %d", ErrFrame, x, need, len(b)-pos)
	}
	dc.body = b[pos : pos+need]
	return uint32(x), b[pos+need:], nil
}

// nextRows reads the vertex and the row bitmaps of the delta at the front
// of b and keeps, per column, the number of rows up to its highest
// non-zero one, for prefetchRows; it reports false when b does not start
// with a delta it can read so far. It checks nothing else: parse does.
func (dc *deltaCodec) nextRows(b []byte) (uint32, bool) {
	x, k := binary.Uvarint(b)
	if k <= 0 || x >= uint64(dc.vertices) {
		return 0, false
	}
	pos := k + 1 // past the deterministic-bucket flag
	for c := range dc.columns {
		if pos >= len(b) {
			return 0, false
		}
		m, k := binary.Uvarint(b[pos:])
		if k <= 0 {
			return 0, false
		}
		pos += k
		dc.tops[c] = uint8(min(bits.Len64(m), dc.rows))
	}
	return uint32(x), true
}

// prefetchRows starts loading, in t, the lines of v's sketch that the
// delta nextRows read will touch: the deterministic bucket's and, in each
// column, those of its rows up to the highest non-zero one. The delta of a
// batch of n ids fills about the low log2(n) rows of every column, and the
// whole sketch is two to three times as many lines.
func (dc *deltaCodec) prefetchRows(t *sketch.Table, v uint32) {
	t.PrefetchBuckets(v, 0, 1)
	for c, top := range dc.tops {
		t.PrefetchBuckets(v, 1+c*dc.rows, int(top))
	}
}

// xorInto XORs the delta the last parse kept into dst, a vertex's sketch
// (BucketsPerVertex buckets), touching only the buckets the delta has:
// the main node merges a remote delta with it, under the vertex's lock.
func (dc *deltaCodec) xorInto(dst []sketch.Bucket) {
	body := dc.body
	if dc.det {
		dst[0].Alpha ^= binary.LittleEndian.Uint64(body)
		dst[0].Gamma ^= binary.LittleEndian.Uint64(body[8:])
		body = body[sketch.BucketBytes:]
	}
	for c, m := range dc.masks {
		col := dst[1+c*dc.rows : 1+(c+1)*dc.rows]
		for ; m != 0; m &= m - 1 {
			b := &col[bits.TrailingZeros64(m)]
			b.Alpha ^= binary.LittleEndian.Uint64(body)
			b.Gamma ^= binary.LittleEndian.Uint64(body[8:16])
			body = body[sketch.BucketBytes:]
		}
	}
}
