package stream

import (
	"context"
	"hash/crc32"
	"io"
)

// Digest identifies a run of consecutive binary records by their number
// and the CRC-32C (Castagnoli, as hash/crc32 computes it: hardware on
// amd64 and arm64) of their bytes. A checkpoint keeps the digest of the
// records [0, n) it holds, so that a resume can tell the stream it is
// given from any other one with the same header, size and ends.
//
// The zero Digest is that of no records. Digest is a value; its methods
// do not change it.
type Digest struct {
	// Records is the number of records hashed, each RecordBytes bytes.
	Records uint64
	// CRC is the CRC-32C of their bytes, as crc32.Checksum returns it
	// (0 for none).
	CRC uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Update returns the digest of d's records followed by recs, whole
// records of RecordBytes bytes each (a partial record at the end is
// hashed but not counted: callers pass whole records).
func (d Digest) Update(recs []byte) Digest {
	return Digest{Records: d.Records + uint64(len(recs)/RecordBytes), CRC: crc32.Update(d.CRC, castagnoli, recs)}
}

// Append returns the digest of d's records followed by next's, from the
// two digests alone, in O(log next.Records) time: this is how blocks
// hashed by different goroutines make the digest of the range they tile.
func (d Digest) Append(next Digest) Digest {
	return Digest{Records: d.Records + next.Records,
		CRC: combineCRC(d.CRC, next.CRC, next.Records)}
}

// CRC combination works on polynomials over GF(2) modulo the Castagnoli
// polynomial, kept in the reflected bit order that crc32 uses: bit 31 is
// the coefficient of x^0 and bit 0 that of x^31, so that 1 is 1<<31 and
// multiplying by x is a right shift, folding x^32 back with the reflected
// polynomial. For finalized CRCs (initial value and final xor all ones),
// crc(A‖B) = crc(A)·x^(8·len(B)) ⊕ crc(B): the all-ones terms cancel,
// since crc(B) carries the same x^(8·len(B)) multiple of them.
const (
	reflectedCastagnoli = 0x82F63B78
	polyOne             = 1 << 31 // the polynomial 1
	polyX8              = 1 << 23 // x^8
)

// mulmod returns a·b modulo the Castagnoli polynomial, both reflected.
func mulmod(a, b uint32) uint32 {
	var p uint32
	// Step i looks at the coefficient of x^i in a, with b = b₀·x^i.
	for ; a != 0; a <<= 1 {
		if a&polyOne != 0 {
			p ^= b
		}
		if b&1 != 0 {
			b = b>>1 ^ reflectedCastagnoli
		} else {
			b >>= 1
		}
	}
	return p
}

// x8n returns x^(8·n) modulo the Castagnoli polynomial, reflected, for
// a run of n records of RecordBytes bytes: (x^8)^(RecordBytes·n) by
// square-and-multiply over the bits of the byte count, which keeps the
// exponent from overflowing.
func x8n(records uint64) uint32 {
	bytes := records * RecordBytes // records ≤ 2^63/RecordBytes: checkHeader bounds them
	r, sq := uint32(polyOne), uint32(polyX8)
	for ; bytes != 0; bytes >>= 1 {
		if bytes&1 != 0 {
			r = mulmod(r, sq)
		}
		sq = mulmod(sq, sq)
	}
	return r
}

// combineCRC returns crc(A‖B) from crcA = crc(A), crcB = crc(B) and the
// length of B in records.
func combineCRC(crcA, crcB uint32, recordsB uint64) uint32 {
	return mulmod(crcA, x8n(recordsB)) ^ crcB
}

// Digest returns the digest of the records Read has returned so far,
// from the first of the Reader's range on. Records that ReadRaw returned
// are not hashed (nor counted): its caller decodes them and hashes what
// it takes itself.
//
// For a packed stream it is the digest of the records' canonical 9-byte
// encodings, the one the binary stream of the same records gives, so that
// a checkpoint taken on one resumes on the other.
func (r *Reader) Digest() Digest {
	if r.pk != nil {
		return r.pk.digest
	}
	return r.digest
}

// Digest reads records [lo, hi) of f, hi capped at Header().Updates, and
// returns their digest. It calls progress, when not nil, on the caller's
// goroutine with the number of records hashed so far after each read of
// about a megabyte. It returns ctx's cause when ctx is done (it looks
// before each read), and the read's error, naming the file and the
// record, when the file is short or cannot be read. It does not check the
// records of a binary stream: their bytes are what it hashes. Those of a
// packed stream it decodes, and checks, into the canonical binary records
// it hashes, so that the two formats of one stream have one digest.
func (f *File) Digest(ctx context.Context, lo, hi uint64, progress func(records uint64)) (Digest, error) {
	r := f.Reader(lo, hi)
	var d Digest
	for {
		if err := context.Cause(ctx); err != nil {
			return d, err
		}
		recs, _, err := r.ReadRaw()
		d = d.Update(recs)
		if progress != nil {
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
