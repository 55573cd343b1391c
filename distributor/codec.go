package distributor

// Every msgpack call of the package sits in this file, behind encode (one
// header into a frame) and decode (one frame's header into its message),
// as memberlist's util.go does, so that the library can be swapped. The
// headers are written and read with msgpack's primitive calls rather than
// by reflection: each length is then checked against this package's
// limits before anything is allocated (msgpack's own limits allow a
// 20-byte header to make it allocate megabytes), and no reflection runs
// per frame.

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// hello opens the handshake, main node first, then worker (doc.go).
type hello struct {
	// Name is the sender's node name, for logs.
	Name string
	// Nonce is the sender's challenge: nonceBytes random bytes.
	Nonce []byte
	// MAC is the worker's answer to the main node's challenge
	// (authMAC("worker", main nonce, worker nonce)); empty from the main
	// node.
	MAC []byte
}

// params gives a worker the sketch geometry and seeds of the graph.
type params struct {
	Vertices uint32
	Factor   float64
	Seed     uint64
	Rows     int
	Columns  int
	// MaxBatchUpdates bounds the neighbour ids of one batch.
	MaxBatchUpdates int
	// MaxFrameBytes is the largest frame payload the main node reads.
	MaxFrameBytes int
	// MAC is the main node's answer to the worker's challenge.
	MAC []byte
}

// ready ends the handshake: the worker accepted the parameters.
type ready struct {
	// Threads is the number of goroutines computing deltas.
	Threads int
	// MaxFrameBytes is the largest frame payload the worker reads.
	MaxFrameBytes int
}

// batchEntry describes one batch of a batches frame; the payload holds
// its Updates neighbour ids encoded in Bytes bytes (wire.go), entries in
// order.
type batchEntry struct {
	ID      uint64
	Vertex  uint32
	Updates uint32
	Bytes   uint32
}

// stop tells a worker that the main node is done with it.
type stop struct{ Reason string }

// failure reports why the sender closes the connection (errorMsg).
type failure struct{ Reason string }

// goodbye tells the main node that the worker leaves (goodbyeMsg).
type goodbye struct{}

// Limits on decoded fields.
const (
	maxNameBytes   = 256
	maxReasonBytes = 1024
	maxMACBytes    = 64
)

// encoder appends msgpack headers to a reusable buffer. Not safe for
// concurrent use: each writer goroutine owns one.
type encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

func newEncoder() *encoder {
	e := &encoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	return e
}

// encode returns the msgpack header of message m, valid until the next
// call. m is one of the message structs above, []batchEntry or []uint64
// (the batch ids of a deltas frame).
func (e *encoder) encode(m any) []byte {
	e.buf.Reset()
	enc := e.enc
	// Writes to a bytes.Buffer do not fail, nor do the encoder's calls
	// over it.
	switch m := m.(type) {
	case *hello:
		enc.EncodeArrayLen(3)
		enc.EncodeString(m.Name)
		enc.EncodeBytes(m.Nonce)
		enc.EncodeBytes(m.MAC)
	case *params:
		enc.EncodeArrayLen(8)
		enc.EncodeUint(uint64(m.Vertices))
		enc.EncodeFloat64(m.Factor)
		enc.EncodeUint(m.Seed)
		enc.EncodeInt(int64(m.Rows))
		enc.EncodeInt(int64(m.Columns))
		enc.EncodeInt(int64(m.MaxBatchUpdates))
		enc.EncodeInt(int64(m.MaxFrameBytes))
		enc.EncodeBytes(m.MAC)
	case *ready:
		enc.EncodeArrayLen(2)
		enc.EncodeInt(int64(m.Threads))
		enc.EncodeInt(int64(m.MaxFrameBytes))
	case []batchEntry:
		enc.EncodeArrayLen(len(m))
		for i := range m {
			enc.EncodeArrayLen(4)
			enc.EncodeUint(m[i].ID)
			enc.EncodeUint(uint64(m[i].Vertex))
			enc.EncodeUint(uint64(m[i].Updates))
			enc.EncodeUint(uint64(m[i].Bytes))
		}
	case []uint64:
		enc.EncodeArrayLen(len(m))
		for _, id := range m {
			enc.EncodeUint(id)
		}
	case *stop:
		enc.EncodeArrayLen(1)
		enc.EncodeString(m.Reason)
	case *failure:
		enc.EncodeArrayLen(1)
		enc.EncodeString(m.Reason)
	case *goodbye:
		enc.EncodeArrayLen(0)
	default:
		panic(fmt.Sprintf("BUG: distributor: cannot encode %T", m))
	}
	return e.buf.Bytes()
}

// decoder decodes msgpack headers. Not safe for concurrent use: each
// reader goroutine owns one.
type decoder struct {
	r   bytes.Reader
	dec *msgpack.Decoder
}

func newDecoder() *decoder {
	d := &decoder{}
	d.dec = msgpack.NewDecoder(&d.r)
	return d
}

// decode decodes header b into m, a pointer to one of the message structs,
// to a []batchEntry or to a []uint64 (reused: decoded into its capacity).
// maxItems bounds the entries of a list. Trailing bytes are an error.
func (d *decoder) decode(b []byte, m any, maxItems int) error {
	d.r.Reset(b)
	d.dec.ResetReader(&d.r)
	var err error
	switch m := m.(type) {
	case *[]batchEntry:
		err = d.entries(m, maxItems)
	case *[]uint64:
		err = d.ids(m, maxItems)
	case *hello:
		err = d.hello(m)
	case *params:
		err = d.params(m)
	case *ready:
		err = d.ready(m)
	case *stop:
		m.Reason, err = d.reason()
	case *failure:
		m.Reason, err = d.reason()
	case *goodbye:
		err = d.arrayLen(0)
	default:
		panic(fmt.Sprintf("BUG: distributor: cannot decode into %T", m))
	}
	if err == nil && d.r.Len() != 0 {
		err = fmt.Errorf("%d bytes after the header", d.r.Len())
	}
	return err
}

// entries decodes a batches frame's header into *m, reusing its capacity.
func (d *decoder) entries(m *[]batchEntry, maxItems int) error {
	n, err := d.listLen(maxItems)
	if err != nil {
		return err
	}
	s := (*m)[:0]
	for range n {
		if err := d.arrayLen(4); err != nil {
			return err
		}
		var e batchEntry
		if e.ID, err = d.dec.DecodeUint64(); err != nil {
			return err
		}
		if e.Vertex, err = d.dec.DecodeUint32(); err != nil {
			return err
		}
		if e.Updates, err = d.dec.DecodeUint32(); err != nil {
			return err
		}
		if e.Bytes, err = d.dec.DecodeUint32(); err != nil {
			return err
		}
		s = append(s, e)
	}
	*m = s
	return nil
}

// ids decodes a deltas frame's header, its batch ids, into *m, reusing
// its capacity.
func (d *decoder) ids(m *[]uint64, maxItems int) error {
	n, err := d.listLen(maxItems)
	if err != nil {
		return err
	}
	s := (*m)[:0]
	for range n {
		id, err := d.dec.DecodeUint64()
		if err != nil {
			return err
		}
		s = append(s, id)
	}
	*m = s
	return nil
}

// hello, params and ready decode the handshake's messages, one field at
// a time.
func (d *decoder) hello(m *hello) (err error) {
	if err := d.arrayLen(3); err != nil {
		return err
	}
	if m.Name, err = d.str(maxNameBytes); err != nil {
		return err
	}
	if m.Nonce, err = d.bytes(nonceBytes); err != nil {
		return err
	}
	m.MAC, err = d.bytes(maxMACBytes)
	return err
}

func (d *decoder) params(m *params) (err error) {
	if err := d.arrayLen(8); err != nil {
		return err
	}
	if m.Vertices, err = d.dec.DecodeUint32(); err != nil {
		return err
	}
	if m.Factor, err = d.dec.DecodeFloat64(); err != nil {
		return err
	}
	if m.Seed, err = d.dec.DecodeUint64(); err != nil {
		return err
	}
	for _, f := range []*int{&m.Rows, &m.Columns, &m.MaxBatchUpdates, &m.MaxFrameBytes} {
		if *f, err = d.dec.DecodeInt(); err != nil {
			return err
		}
	}
	m.MAC, err = d.bytes(maxMACBytes)
	return err
}

func (d *decoder) ready(m *ready) (err error) {
	if err := d.arrayLen(2); err != nil {
		return err
	}
	if m.Threads, err = d.dec.DecodeInt(); err != nil {
		return err
	}
	m.MaxFrameBytes, err = d.dec.DecodeInt()
	return err
}

// reason decodes the one field of a stop or error frame.
func (d *decoder) reason() (string, error) {
	if err := d.arrayLen(1); err != nil {
		return "", err
	}
	return d.str(maxReasonBytes)
}

// arrayLen reads an array header of exactly n fields.
func (d *decoder) arrayLen(n int) error {
	got, err := d.dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("array of %d fields, want %d", got, n)
	}
	return nil
}

// listLen reads an array header of at most max entries, each of which
// takes at least one byte, so no more than the bytes left.
func (d *decoder) listLen(max int) (int, error) {
	n, err := d.dec.DecodeArrayLen()
	if err != nil {
		return 0, err
	}
	if n < 0 || n > max || n > d.r.Len() {
		return 0, fmt.Errorf("list of %d entries, limit %d", n, min(max, d.r.Len()))
	}
	return n, nil
}

// bytes reads a bin or str field of at most max bytes into a new slice.
func (d *decoder) bytes(max int) ([]byte, error) {
	n, err := d.dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, nil // nil
	}
	if n > max || n > d.r.Len() {
		return nil, fmt.Errorf("field of %d bytes, limit %d", n, min(max, d.r.Len()))
	}
	b := make([]byte, n)
	if err := d.dec.ReadFull(b); err != nil {
		return nil, err
	}
	return b, nil
}

func (d *decoder) str(max int) (string, error) {
	b, err := d.bytes(max)
	return string(b), err
}

// encodeMeta returns the msgpack form of m, for memberlist's node
// metadata: an array of Role, Addr, a reserved integer, Name,
// Incarnation and Leaving. The reserved field was a worker's thread
// count, which no member read (the main node learns it from the
// handshake's ready); it is written as 0 and skipped when read, so that
// members from before and after its removal read each other's metadata.
func encodeMeta(m NodeMeta) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.EncodeArrayLen(6)
	enc.EncodeString(m.Role)
	enc.EncodeString(m.Addr)
	enc.EncodeInt(0) // reserved
	enc.EncodeString(m.Name)
	enc.EncodeUint(m.Incarnation)
	enc.EncodeBool(m.Leaving)
	return buf.Bytes()
}

// decodeMeta decodes node metadata written by encodeMeta.
func decodeMeta(b []byte) (NodeMeta, error) {
	var m NodeMeta
	d := newDecoder()
	d.r.Reset(b)
	d.dec.ResetReader(&d.r)
	if err := d.arrayLen(6); err != nil {
		return m, err
	}
	var err error
	if m.Role, err = d.str(maxNameBytes); err != nil {
		return m, err
	}
	if m.Addr, err = d.str(maxNameBytes); err != nil {
		return m, err
	}
	if _, err = d.dec.DecodeInt(); err != nil { // reserved
		return m, err
	}
	if m.Name, err = d.str(maxNameBytes); err != nil {
		return m, err
	}
	if m.Incarnation, err = d.dec.DecodeUint64(); err != nil {
		return m, err
	}
	if m.Leaving, err = d.dec.DecodeBool(); err != nil {
		return m, err
	}
	if d.r.Len() != 0 {
		return m, fmt.Errorf("%d bytes after the metadata", d.r.Len())
	}
	return m, nil
}
