package distributor

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// ErrIntegrity is wrapped when a frame after the handshake fails its
// integrity check (doc.go, Frames): its bytes were changed, cut, replayed
// or reordered on the way, or did not come from the peer that passed the
// handshake. The connection is dropped like any broken link and its
// batches are sent again.
var ErrIntegrity = errors.New("distributor: frame failed its integrity check")

// sessionKeyBytes is the AES key of one direction of one connection:
// AES-128-GCM.
const sessionKeyBytes = 16

// crcBytes is the trailer of a frame on a connection without a cluster
// key: a CRC-32C.
const crcBytes = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// seal checks the frames of one direction of one connection once the
// handshake is over. With a cluster key it is AES-128-GCM under a key of
// the session and the direction: the prefix and the header are its
// additional data, the payload travels encrypted, and the nonce is the
// frame's sequence number in that direction, never sent, so that a frame
// changed, injected, replayed or moved fails. Without a key it is a
// CRC-32C of the prefix, the header and the payload, which catches
// corruption, not an attacker. Its trailer follows the payload. Not safe
// for concurrent use: the connection's one reader or one writer owns it.
type seal struct {
	aead  cipher.AEAD // nil: CRC-32C
	seq   uint64      // frames sealed or opened so far
	nonce [12]byte
}

// newSeal returns the seal of one direction, "main" (main node → worker)
// or "worker", of the connection whose handshake exchanged the nonces nm
// (the main node's) and nw, under the cluster key (none: CRC-32C).
func newSeal(key []byte, from string, nm, nw []byte) *seal {
	if len(key) == 0 {
		return &seal{}
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(protocolVersion))
	m.Write([]byte{0})
	m.Write([]byte("frames from " + from))
	m.Write([]byte{0})
	m.Write(nm)
	m.Write(nw)
	block, err := aes.NewCipher(m.Sum(nil)[:sessionKeyBytes])
	if err != nil {
		panic("BUG: distributor: " + err.Error()) // the key size is fixed
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("BUG: distributor: " + err.Error())
	}
	return &seal{aead: aead}
}

// trailerBytes is what the seal adds after each payload.
func (s *seal) trailerBytes() int {
	if s.aead == nil {
		return crcBytes
	}
	return s.aead.Overhead()
}

// next returns the nonce of the next frame and counts it.
func (s *seal) next() []byte {
	binary.LittleEndian.PutUint64(s.nonce[4:], s.seq)
	s.seq++
	return s.nonce[:]
}

// close returns, in dst's storage, what follows head (the frame's prefix
// and header) on the wire in place of or after payload: with a key, the
// encrypted payload and its tag (true: it replaces the payload); without,
// the CRC-32C alone (false: the payload's parts go out unchanged from the
// caller's buffers, then it).
func (s *seal) close(dst, head []byte, payload [][]byte) ([]byte, bool) {
	if s.aead == nil {
		c := crc32.Update(0, castagnoli, head)
		for _, p := range payload {
			c = crc32.Update(c, castagnoli, p)
		}
		return binary.LittleEndian.AppendUint32(dst[:0], c), false
	}
	plain := dst[:0]
	switch len(payload) {
	case 0:
	case 1:
		plain = payload[0]
	default:
		// Gathered first: Seal takes one plaintext. The callers send one
		// part; this keeps any other caller correct.
		for _, p := range payload {
			plain = append(plain, p...)
		}
	}
	// Seal may run in place over plain when it is dst's own buffer.
	return s.aead.Seal(dst[:0], s.next(), plain, head), true
}

// open checks the frame of head (its prefix and header) and body (the
// payload as sent, then the trailer) and returns the payload: with a key,
// body decrypted in place, without it, the first bytes of body. It
// returns an error wrapping ErrIntegrity, naming the frame type and its
// number in the direction, when the check fails.
func (s *seal) open(head, body []byte, t messageType) ([]byte, error) {
	n := len(body) - s.trailerBytes()
	seq := s.seq
	if s.aead == nil {
		s.seq++
		c := crc32.Update(crc32.Update(0, castagnoli, head), castagnoli, body[:n])
		if got := binary.LittleEndian.Uint32(body[n:]); got != c {
			return nil, fmt.Errorf("%w: %s frame %d: CRC-32C %#08x, its bytes give %#08x", ErrIntegrity, t, seq, got, c)
		}
		return body[:n], nil
	}
	out, err := s.aead.Open(body[:0], s.next(), body, head)
	if err != nil {
		return nil, fmt.Errorf("%w: %s frame %d: its authentication tag does not match (changed, injected or out of order)", ErrIntegrity, t, seq)
	}
	return out, nil
}
