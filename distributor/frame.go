package distributor

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// messageType is the first byte of a frame.
type messageType uint8

// The list of available message types.
//
// WARNING: ONLY APPEND TO THIS LIST! The numeric values are part of the
// protocol itself.
const (
	_          messageType = iota // 0 is never sent: a zeroed frame is garbage
	helloMsg                      // handshake: name, challenge, answer
	paramsMsg                     // main node → worker: sketch geometry and seeds
	readyMsg                      // worker → main node: parameters accepted
	batchesMsg                    // main node → worker: batches to sketch
	deltasMsg                     // worker → main node: their deltas
	stopMsg                       // main node → worker: no more batches; exit
	errorMsg                      // either way: why the sender closes
	goodbyeMsg                    // worker → main node: it leaves; not a failure
	numMessageTypes
)

func (t messageType) String() string {
	names := [...]string{"invalid", "hello", "params", "ready", "batches", "deltas", "stop", "error", "goodbye"}
	if int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("messageType(%d)", uint8(t))
}

// protocolVersion opens every connection, raw, in both directions, before
// any frame. Version 5: every frame after the handshake carries a trailer
// (seal.go), and the payload is encrypted under a cluster key.
const protocolVersion = "sketchcc-batch/6"

// DefaultMaxFrameBytes is the default bound on a frame's payload: 64 MiB.
const DefaultMaxFrameBytes = 64 << 20

// DefaultFlushDelay is the default time a partly filled frame waits for
// more batches or deltas before it is sent.
const DefaultFlushDelay = time.Millisecond

// prefixBytes is the frame prefix: type uint8, header length uint32,
// payload length uint32, little-endian.
const prefixBytes = 9

// Limits on what a frame may declare, checked before anything is read or
// allocated.
const (
	// handshakeHeaderBytes bounds a header before the peer is
	// authenticated, so that a stranger makes us allocate little.
	handshakeHeaderBytes = 1 << 10
	// maxHeaderBytes bounds a header after the handshake: a batches frame
	// of maxFrameBatches entries takes at most 25 bytes per entry.
	maxHeaderBytes = 26 * maxFrameBatches
	// maxFrameBatches bounds the batches or deltas of one frame.
	maxFrameBatches = 4096
)

// frameReader reads frames from one connection. Not safe for concurrent
// use: one reader goroutine per connection owns it.
type frameReader struct {
	r *bufio.Reader
	// head holds the current frame's prefix and header, t its type.
	head []byte
	t    messageType
	dec  *decoder
	// maxHeader and maxPayload bound the next frame, in bytes.
	maxHeader, maxPayload int
	// seal checks every frame once the handshake is over (nil before);
	// empty holds the trailer of a frame without payload.
	seal  *seal
	empty []byte
}

// newFrameReader returns a frameReader on r; count, if not nil, counts
// the bytes read.
func newFrameReader(r io.Reader, count *atomic.Uint64) *frameReader {
	if count != nil {
		r = countingReader{r, count}
	}
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), head: make([]byte, prefixBytes, 512), dec: newDecoder(),
		maxHeader: handshakeHeaderBytes}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r     io.Reader
	count *atomic.Uint64
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.count.Add(uint64(n))
	return n, err
}

// readVersion reads the peer's protocol string and checks it.
func (fr *frameReader) readVersion() error {
	var b [len(protocolVersion)]byte
	if _, err := io.ReadFull(fr.r, b[:]); err != nil {
		return fmt.Errorf("cannot read protocol version: %w", noEOF(err))
	}
	if string(b[:]) != protocolVersion {
		if string(b[:len(b)-1]) == protocolVersion[:len(protocolVersion)-1] {
			return fmt.Errorf("%w: peer speaks %q, this build %q", ErrVersion, b[:], protocolVersion)
		}
		return fmt.Errorf("%w: peer opened with %q, not %q: not a sketchcc peer", ErrVersion, b[:], protocolVersion)
	}
	return nil
}

// next reads the prefix and header of the next frame. The header is valid
// until the next call; the caller then reads the payload with payload.
// Lengths over the limits are errors, found before reading further. Once
// the frames are sealed, a frame without payload is checked here, before
// its header is returned; one with a payload when payload reads it, and
// the caller must not decode the header before then.
func (fr *frameReader) next() (t messageType, header []byte, payloadBytes int, err error) {
	fr.head = fr.head[:prefixBytes]
	if _, err := io.ReadFull(fr.r, fr.head); err != nil {
		return 0, nil, 0, err
	}
	t = messageType(fr.head[0])
	h := binary.LittleEndian.Uint32(fr.head[1:])
	p := binary.LittleEndian.Uint32(fr.head[5:])
	switch {
	case t == 0 || t >= numMessageTypes:
		return t, nil, 0, fmt.Errorf("%w: unknown message type %d", ErrFrame, uint8(t))
	case uint64(h) > uint64(fr.maxHeader):
		return t, nil, 0, fmt.Errorf("%w: %s header of %d bytes, limit %d", ErrFrame, t, h, fr.maxHeader)
	case uint64(p) > uint64(fr.maxPayload):
		return t, nil, 0, fmt.Errorf("%w: %s payload of %d bytes, limit %d", ErrFrame, t, p, fr.maxPayload)
	}
	fr.t = t
	if n := prefixBytes + int(h); cap(fr.head) < n {
		fr.head = append(fr.head, make([]byte, n-prefixBytes, max(n, 512))...)
	}
	fr.head = fr.head[:prefixBytes+int(h)]
	if _, err := io.ReadFull(fr.r, fr.head[prefixBytes:]); err != nil {
		return t, nil, 0, noEOF(err)
	}
	if p == 0 && fr.seal != nil {
		if fr.empty, err = fr.payload(fr.empty, 0); err != nil {
			return t, nil, 0, err
		}
	}
	return t, fr.head[prefixBytes:], int(p), nil
}

// payload reads the current frame's payload of n bytes (as next returned
// it), and its trailer once the frames are sealed, into buf, grown when
// it is too short, and returns the payload checked: a slice of buf, valid
// until buf is used again. A frame that fails its check is an error
// wrapping ErrIntegrity.
func (fr *frameReader) payload(buf []byte, n int) ([]byte, error) {
	need := n
	if fr.seal != nil {
		need += fr.seal.trailerBytes()
	}
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	body := buf[:need]
	if _, err := io.ReadFull(fr.r, body); err != nil {
		return nil, noEOF(err)
	}
	if fr.seal == nil {
		return body, nil
	}
	return fr.seal.open(fr.head, body, fr.t)
}

// expect reads the next frame, which must be of type want with an empty
// payload, and decodes its header into m. An errorMsg from the peer is
// returned as a *PeerError.
func (fr *frameReader) expect(want messageType, m any) error {
	t, h, p, err := fr.next()
	if err != nil {
		return err
	}
	if p != 0 {
		return fmt.Errorf("%w: %s frame with a %d-byte payload", ErrFrame, t, p)
	}
	if t == errorMsg && want != errorMsg {
		var f failure
		if err := fr.dec.decode(h, &f, 0); err != nil {
			return fmt.Errorf("%w: bad error frame: %v", ErrFrame, err)
		}
		return &PeerError{Reason: f.Reason}
	}
	if t != want {
		return fmt.Errorf("%w: got a %s frame, want %s", ErrFrame, t, want)
	}
	if err := fr.dec.decode(h, m, 0); err != nil {
		return fmt.Errorf("%w: bad %s header: %v", ErrFrame, t, err)
	}
	return nil
}

// noEOF turns an EOF in the middle of something into ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// frameWriter writes frames to one connection. Not safe for concurrent
// use: one writer goroutine per connection owns it.
type frameWriter struct {
	w    io.Writer
	enc  *encoder
	head []byte      // prefix + header of the frame being written
	bufs net.Buffers // head, then payload parts: written with one writev
	// seal seals every frame once the handshake is over (nil before);
	// sealed holds the sealed payload or the trailer.
	seal   *seal
	sealed []byte
	// count, if not nil, counts the bytes written.
	count *atomic.Uint64
}

// newFrameWriter returns a frameWriter on w, which should be the net.Conn
// itself so that a frame goes out in one writev; count, if not nil, counts
// the bytes written.
func newFrameWriter(w io.Writer, count *atomic.Uint64) *frameWriter {
	return &frameWriter{w: w, enc: newEncoder(), count: count}
}

// writeVersion writes the protocol string.
func (fw *frameWriter) writeVersion() error {
	n, err := io.WriteString(fw.w, protocolVersion)
	if fw.count != nil {
		fw.count.Add(uint64(n))
	}
	return err
}

// write writes one frame: type t, the header of m, and the payload parts
// in order (not copied: the connection's writev reads them), sealed once
// the handshake is over (the payload is then encrypted into a buffer of
// the writer's under a cluster key). It returns the bytes written.
func (fw *frameWriter) write(t messageType, m any, payload ...[]byte) (int, error) {
	h := fw.enc.encode(m)
	var p int
	for _, b := range payload {
		p += len(b)
	}
	if uint64(p) > 1<<32-1 {
		panic(fmt.Sprintf("BUG: distributor: payload of %d bytes", p))
	}
	fw.head = append(fw.head[:0], byte(t))
	fw.head = binary.LittleEndian.AppendUint32(fw.head, uint32(len(h)))
	fw.head = binary.LittleEndian.AppendUint32(fw.head, uint32(p))
	fw.head = append(fw.head, h...)
	fw.bufs = append(fw.bufs[:0], fw.head)
	sealedPayload := false
	if fw.seal != nil {
		fw.sealed, sealedPayload = fw.seal.close(fw.sealed, fw.head, payload)
	}
	if !sealedPayload {
		for _, b := range payload {
			if len(b) > 0 {
				fw.bufs = append(fw.bufs, b)
			}
		}
	}
	if fw.seal != nil {
		fw.bufs = append(fw.bufs, fw.sealed)
	}
	n := 0
	for _, b := range fw.bufs {
		n += len(b)
	}
	bufs := fw.bufs // WriteTo consumes its receiver
	written, err := bufs.WriteTo(fw.w)
	clear(fw.bufs[1:]) // drop references to the payload
	if fw.count != nil {
		fw.count.Add(uint64(written))
	}
	return n, err
}

// checkBatches checks the entries of a batches frame against its payload
// length and the graph's limits, and returns the neighbour ids they hold
// in all. The ids may take at most maxIDBytes at 4 bytes each, so that
// decoding them allocates no more than the payload limit allows.
func checkBatches(entries []batchEntry, payloadBytes int, vertices uint32, maxBatch, maxIDBytes int) (int, error) {
	if len(entries) == 0 {
		return 0, fmt.Errorf("%w: batches frame without batches", ErrFrame)
	}
	var ids, bytes uint64
	for _, e := range entries {
		// A bitmap byte holds at most 8 ids; a batch whose ids all
		// cancelled holds none.
		if uint64(e.Updates) > uint64(maxBatch) || e.Vertex >= vertices ||
			e.Bytes < 1 || uint64(e.Bytes) > uint64(maxBatchBytes(int(e.Updates))) ||
			uint64(e.Updates) > 8*uint64(e.Bytes) {
			return 0, fmt.Errorf("%w: batch %d of %d updates in %d bytes for vertex %d (limits: %d updates, %d vertices)",
				ErrFrame, e.ID, e.Updates, e.Bytes, e.Vertex, maxBatch, vertices)
		}
		ids += uint64(e.Updates)
		bytes += uint64(e.Bytes)
	}
	if bytes != uint64(payloadBytes) || ids*4 > uint64(maxIDBytes) {
		return 0, fmt.Errorf("%w: %d batches of %d bytes and %d updates in all in a %d-byte payload (at most %d ids)",
			ErrFrame, len(entries), bytes, ids, payloadBytes, maxIDBytes/4)
	}
	return int(ids), nil
}

// checkDeltas checks the batch ids of a deltas frame against its payload
// length: one encoded delta, of dc.minBytes to dc.maxBytes, per id.
func checkDeltas(ids []uint64, payloadBytes int, dc *deltaCodec) error {
	if len(ids) == 0 || payloadBytes < len(ids)*dc.minBytes() || payloadBytes > len(ids)*dc.maxBytes() {
		return fmt.Errorf("%w: %d deltas in a %d-byte payload, want %d to %d bytes each",
			ErrFrame, len(ids), payloadBytes, dc.minBytes(), dc.maxBytes())
	}
	return nil
}
