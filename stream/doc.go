// Package stream reads and writes edge-update streams: the binary format
// shared by the field's tools, a packed format of the same updates in
// about half the bytes, and the two text formats used for small inputs
// and for ground truth.
//
// # Binary format
//
// All integers are little-endian and records are packed with no padding.
// The reference C++ tools write native x86 structs; this package states the
// byte order instead of assuming it.
//
//	offset  size  field
//	0       4     Vertices  uint32   vertex ids are in [0, Vertices)
//	4       8     Updates   uint64   number of records that follow
//	12      9·i   record i, i in [0, Updates):
//	                +0  Type uint8   0 = insert, 1 = delete
//	                +1  Src  uint32
//	                +5  Dst  uint32
//
// A file is exactly 12 + 9·Updates bytes long. There is no magic number.
//
// A live stream (a pipe or a socket whose length is not known when it
// starts) writes Updates = 2^64−1 (UnknownUpdates, bytes ff ff ff ff ff ff
// ff ff): its records then run until the producer closes its end, between
// two records. Only live inputs take the marker; a file must give its
// count. A packed header must give its count too.
// For example the bytes
//
//	00 04 00 00 | 50 21 00 00 00 00 00 00 | 00 14 00 00 00 b4 00 00 00
//
// are a header for 1,024 vertices and 8,528 updates, then INSERT(20, 180).
//
// (u,v) and (v,u) name the same undirected edge, and Src != Dst. The sketches
// downstream are linear over GF(2), so every update toggles its edge whatever
// its type byte; the type is still checked to be 0 or 1 so that a corrupt
// file is caught.
//
// # Packed format
//
// A packed stream holds the same updates in 1 + 2·b bits each, with
// b = IDBits(Vertices) = ⌈log2 Vertices⌉ (17 at 2^17 vertices: 4.375
// bytes an update), in checksummed blocks that decode independently. Its
// first word is 0, a vertex count the binary format rejects (ErrNoVertices),
// so the two formats cannot be mistaken for each other; IsPacked tells
// them apart from the first 8 bytes. NewReader, ReadHeader and Open read
// either format, telling them apart so: the same Reader, File and Cursor
// serve both.
//
//	offset  size  field
//	0       4     0        uint32   the binary format's Vertices slot
//	4       4     magic    "SCPK"
//	8       4     version  uint32   1
//	12      4     Vertices uint32   vertex ids are in [0, Vertices)
//	16      8     Updates  uint64   number of records, at most 2^56
//	24      4     R        uint32   records per block: a multiple of 8 in
//	                                  [8, 2^21]; the writer uses 2^16
//	28      4     CRC-32C of bytes [0, 28)
//	32            block k, k in [0, ⌈Updates/R⌉):
//	                +0  CRC-32C of (k as uint64 LE, then the payload)
//	                +4  payload: the records of the block, bit-packed
//
// Every block holds R records except the last, which holds the
// rest. Record i of a block starts at bit i·(1+2b) of its payload, bits
// counted from the least significant of each byte: one bit of Type, then
// b bits of Src, then b bits of Dst, each least significant bit first.
// The payload is padded with zero bits to a whole byte; 8 records take
// exactly 1+2b bytes, so full blocks need no padding, all have the same
// size, and the block index is a formula rather than a table: block k
// starts at byte 32 + k·(4 + R·(1+2b)/8) and its first record
// is k·R. A reader of records [lo, hi) seeks there, and a
// checksum seeded with k catches a block copied to the wrong place.
//
// A reader checks the header's checksum, the file size against the header
// (Open), each block's checksum before it returns any of its records,
// the padding, and each record (ids below Vertices, no self-loop). A
// failure is a *FormatError whose Index is the first record of the bad
// block (or the bad record), whose Offset is the block's byte offset (the
// byte holding the bad record's first bit), and whose Detail names the
// block.
//
// The Digest of packed records is that of their canonical 9-byte binary
// encodings, so a checkpoint taken on a binary stream resumes on its packed
// copy and back. Hashing them costs about 20% of the decode (113 M vs 139 M
// updates/s at 2^17 vertices on an AMD EPYC family 26 model 2 core), so
// a Cursor over a packed regular file hashes only when its Digest is
// asked for, reading the records again; for a caller that hashes (or not)
// itself, ReadRaw returns the canonical records unhashed.
//
// # Text formats
//
// Typed: a first line "Vertices Updates", then one "type src dst" line per
// update. Untyped ("cumulative"): a first line "Vertices Edges", then one
// "src dst" line per edge, all inserts; it is also the ground-truth format
// for the final graph of a stream. Fields are separated by any run of spaces
// or tabs; a line ends at LF, CRLF or a lone CR (old Mac OS files).
//
// A header of zero updates, in either format, is a stream of Vertices
// isolated vertices: a graph with Vertices components. An input with no
// header at all is ErrEmpty, and a header with fewer than 2 vertices
// ErrNoVertices.
//
// # Errors
//
// Every problem in the input is a *FormatError naming the input, the update
// index and the byte offset (binary) or the line number (text), wrapping one
// of the sentinel errors of this package or io.ErrUnexpectedEOF; it is
// returned again by every later Read. Bytes or lines after the last update
// are ErrTrailing, so a reader must end with the stream. An error of the
// underlying io.Reader is not bad input: it is wrapped with the position,
// returned once, and a later Read retries from the same place, as
// bufio.Reader does. Nothing in this package panics on bad input.
//
// Readers and writers are not safe for concurrent use. Several Readers may
// read disjoint record ranges of one File concurrently; a File that is a
// pipe or device has a single Reader, from record 0.
package stream
