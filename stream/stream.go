package stream

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// HeaderBytes is the size of the binary header: Vertices uint32 then
// Updates uint64.
const HeaderBytes = 12

// UnknownUpdates in a binary header's Updates field marks a live stream
// whose length is not known when it starts (a pipe or a socket): its
// records run until the producer closes its end, cleanly between two
// records. A file must give its count: NewReader and Open reject the
// marker (ErrUnknownCount); main-node reads such a stream from standard
// input or from TCP producers.
const UnknownUpdates = math.MaxUint64

// RecordBytes is the size of one binary update record: type uint8, src
// uint32, dst uint32.
const RecordBytes = 9

// Header describes a stream: the vertex count and the number of updates.
type Header struct {
	// Vertices is the number of vertices; ids are in [0, Vertices).
	Vertices uint32
	// Updates is the number of edge updates (records or lines) that follow.
	Updates uint64
}

// UpdateType says whether an update inserts or deletes its edge.
type UpdateType uint8

const (
	// Insert adds an edge that is absent (type byte 0).
	Insert UpdateType = 0
	// Delete removes an edge that is present (type byte 1).
	Delete UpdateType = 1
)

// String returns "insert" or "delete".
func (t UpdateType) String() string {
	switch t {
	case Insert:
		return "insert"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("UpdateType(%d)", uint8(t))
}

// Edge is an unordered pair of vertex ids with Src != Dst.
type Edge struct {
	Src, Dst uint32
}

// Update is one edge update: one 9-byte record of a binary stream.
type Update struct {
	Type UpdateType
	Edge
}

var (
	// ErrEmpty is returned for an input with no header at all.
	ErrEmpty = errors.New("stream: empty input: no header")
	// ErrNoVertices is returned for a header with fewer than 2 vertices.
	ErrNoVertices = errors.New("stream: header declares fewer than 2 vertices")
	// ErrTruncated is returned when the input holds fewer records than its
	// header promises.
	ErrTruncated = errors.New("stream: truncated")
	// ErrTrailing is returned when the input holds more bytes or lines than
	// its header promises.
	ErrTrailing = errors.New("stream: more data than the header promises")
	// ErrBadUpdateType is returned for a type other than 0 (insert) or 1
	// (delete).
	ErrBadUpdateType = errors.New("stream: bad update type")
	// ErrVertexRange is returned for a vertex id >= the header's Vertices.
	ErrVertexRange = errors.New("stream: vertex id out of range")
	// ErrSelfLoop is returned for an update whose Src equals its Dst.
	ErrSelfLoop = errors.New("stream: self-loop")
	// ErrUnknownCount is returned by NewReader and Open for a header whose
	// Updates is UnknownUpdates: only a live input reads such a stream.
	ErrUnknownCount = errors.New("stream: update count unknown (a live stream's header)")
	// ErrSyntax is returned for a text line that does not parse.
	ErrSyntax = errors.New("stream: syntax error")
)

// FormatError reports a problem at one place of an input. Use errors.Is on
// it to test for the sentinel (or io.ErrUnexpectedEOF) it wraps.
type FormatError struct {
	// Name is the file name, or "" for an unnamed reader.
	Name string
	// Index is the 0-based index of the update, or -1 for the header.
	Index int64
	// Offset is the byte offset of the record in a binary input, or -1.
	Offset int64
	// Line is the 1-based line number in a text input, or 0.
	Line int64
	// Detail says what was found, for example "type byte 7".
	Detail string
	// Err is the sentinel error.
	Err error
}

func (e *FormatError) Error() string {
	var b []byte
	b = append(b, "stream: "...)
	if e.Name != "" {
		b = append(b, e.Name...)
		b = append(b, ": "...)
	}
	switch {
	case e.Index < 0 && e.Line > 0:
		b = fmt.Appendf(b, "header at line %d: ", e.Line)
	case e.Index < 0:
		b = append(b, "header: "...)
	case e.Line > 0:
		b = fmt.Appendf(b, "update %d at line %d: ", e.Index, e.Line)
	default:
		b = fmt.Appendf(b, "update %d at byte offset %d: ", e.Index, e.Offset)
	}
	msg := e.Err.Error()
	if len(msg) > 8 && msg[:8] == "stream: " {
		msg = msg[8:]
	}
	b = append(b, msg...)
	if e.Detail != "" {
		b = append(b, " ("...)
		b = append(b, e.Detail...)
		b = append(b, ')')
	}
	return string(b)
}

func (e *FormatError) Unwrap() error { return e.Err }

// RecordOffset returns the byte offset of binary record i.
func RecordOffset(i uint64) int64 { return HeaderBytes + int64(i)*RecordBytes }

// UpdateCount returns "1 update" or "n updates", for messages.
func UpdateCount(n uint64) string {
	if n == 1 {
		return "1 update"
	}
	return strconv.FormatUint(n, 10) + " updates"
}

// Source is what the ingestion pipeline reads from: a binary Reader or a
// TextReader.
type Source interface {
	// Header returns the stream's header.
	Header() Header
	// Read fills dst with the next updates and returns how many it stored.
	// It returns io.EOF (and n = 0) after the last update, and a
	// *FormatError for bad input; updates before the bad one are returned
	// first, with a nil error.
	Read(dst []Update) (n int, err error)
}
