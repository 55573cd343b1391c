package service

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"sync"
)

// The binary encoding of POST /v1/connected, chosen by the request's
// Content-Type application/octet-stream (all integers little-endian):
//
//	request:  N pairs of 8 bytes: u uint32, v uint32
//	answer:   position uint64 | N uint32 | P uint32 |
//	          P producers of 12 bytes: id uint32, applied uint64 |
//	          ⌈N/8⌉ bytes: bit i%8 of byte i/8 is 1 when pair i is connected
//
// It answers the same question as the JSON body without a JSON encoder or
// decoder on either side: a 1,000-pair request is 8,000 bytes, its answer
// 141 bytes with one producer.
const (
	binaryType      = "application/octet-stream"
	pairBytes       = 8
	binaryHeadBytes = 16
	producerBytes   = 12
	// pooledBodyBytes is the largest buffer kept for reuse between
	// requests (MaxPairs' default takes 800,000 bytes).
	pooledBodyBytes = 1 << 20
)

// binaryContentType is the answer's Content-Type header, shared by every
// binary answer.
var binaryContentType = []string{binaryType}

// bufPool holds the request and answer buffers of binary batches.
var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// isBinary reports whether r's body is binary pairs.
func isBinary(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == binaryType {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == binaryType
}

// binaryHead is the encoded head of one answer: position, producers.
type binaryHead struct {
	ans *Answer
	b   []byte // position, a zero N, P, the producers
}

// binaryHead returns ans's encoded head, encoding it once per answer (the
// last one is kept: a burst of requests shares one answer).
func (a *API) binaryHead(ans *Answer) []byte {
	if h := a.binHead.Load(); h != nil && h.ans == ans {
		return h.b
	}
	b := make([]byte, binaryHeadBytes, binaryHeadBytes+producerBytes*len(ans.Producers))
	binary.LittleEndian.PutUint64(b[0:8], ans.Position)
	binary.LittleEndian.PutUint32(b[12:16], uint32(len(ans.Producers)))
	for _, p := range ans.Producers {
		b = binary.LittleEndian.AppendUint32(b, uint32(p.ID))
		b = binary.LittleEndian.AppendUint64(b, p.Applied)
	}
	a.binHead.Store(&binaryHead{ans: ans, b: b})
	return b
}

// readPairs reads r's body of binary pairs into buf and checks it: a
// whole number of pairs, at most maxPairs, every vertex below n. It
// returns the status and error of a bad body, which name the byte offset
// and the pair.
func readPairs(r *http.Request, buf *bytes.Buffer, maxPairs int, n uint32) (int, error) {
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, pooledBodyBytes)))
	}
	_, err := buf.ReadFrom(r.Body)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", tooBig.Limit)
	case err != nil:
		return http.StatusBadRequest, fmt.Errorf("reading the body: %v", err)
	}
	b := buf.Bytes()
	switch {
	case len(b) == 0:
		return http.StatusBadRequest, errors.New("empty body: want pairs of little-endian uint32 vertex ids, 8 bytes a pair")
	case len(b)%pairBytes != 0:
		return http.StatusBadRequest, fmt.Errorf("body of %d bytes is not a whole number of 8-byte pairs: a partial pair of %d bytes at byte offset %d",
			len(b), len(b)%pairBytes, len(b)-len(b)%pairBytes)
	case len(b)/pairBytes > maxPairs:
		return http.StatusBadRequest, fmt.Errorf("%d pairs, at most %d a request", len(b)/pairBytes, maxPairs)
	}
	for off := 0; off < len(b); off += 4 {
		if x := binary.LittleEndian.Uint32(b[off:]); x >= n {
			return http.StatusBadRequest, fmt.Errorf("pair %d, byte offset %d: vertex %d out of range, the stream has %d vertices",
				off/pairBytes, off, x, n)
		}
	}
	return 0, nil
}

// connectedBinary answers a batch of binary pairs (see binaryType) from
// the labels of the next answer: O(pairs), no allocation per pair, the
// buffers pooled.
func (a *API) connectedBinary(w http.ResponseWriter, r *http.Request) {
	in := bufPool.Get().(*bytes.Buffer)
	defer putBuf(in)
	in.Reset()
	if status, err := readPairs(r, in, a.cfg.MaxPairs, a.svc.Load().src.Header().Vertices); err != nil {
		writeError(w, status, "%v", err)
		return
	}
	ans := a.answer(w, r)
	if ans == nil {
		return
	}
	pairs := in.Bytes()
	np := len(pairs) / pairBytes
	out := bufPool.Get().(*bytes.Buffer)
	defer putBuf(out)
	out.Reset()
	out.Write(a.binaryHead(ans))
	out.Grow((np + 7) / 8)
	b := out.AvailableBuffer()[:(np+7)/8]
	clear(b)
	l := ans.Result.Labels
	for i := range np {
		p := pairs[i*pairBytes:]
		if l[binary.LittleEndian.Uint32(p)] == l[binary.LittleEndian.Uint32(p[4:])] {
			b[i/8] |= 1 << (i % 8)
		}
	}
	out.Write(b)
	body := out.Bytes()
	binary.LittleEndian.PutUint32(body[8:12], uint32(np))
	h := w.Header()
	h["Content-Type"] = binaryContentType
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body) // an error: the client has gone or stopped reading (WriteWait)
}

// putBuf returns b to the pool unless it has grown past pooledBodyBytes.
func putBuf(b *bytes.Buffer) {
	if b.Cap() <= pooledBodyBytes {
		bufPool.Put(b)
	}
}
