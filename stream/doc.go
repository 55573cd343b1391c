// Package stream reads and writes edge-update streams: the binary format
// shared by the field's tools and the two text formats used for small
// inputs and for ground truth.
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
