package distributor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
)

// The nonces and key the sealed test streams are made with.
var (
	testMainNonce   = bytes.Repeat([]byte{0x11}, nonceBytes)
	testWorkerNonce = bytes.Repeat([]byte{0x22}, nonceBytes)
	testKey         = bytes.Repeat([]byte{0x5c}, 32)
)

// goldenOrder is the order of the golden frames in a sealed test stream.
var goldenOrder = []string{"hello.bin", "params.bin", "ready.bin", "batches.bin", "deltas.bin", "stop.bin", "error.bin"}

// sealFrame returns the frame raw (as the handshake sends it: prefix,
// header, payload) sealed by s as its direction's next frame.
func sealFrame(s *seal, raw []byte) []byte {
	h := binary.LittleEndian.Uint32(raw[1:5])
	head, payload := raw[:prefixBytes+h], raw[prefixBytes+h:]
	tail, replaced := s.close(nil, head, [][]byte{payload})
	out := slices.Clone(head)
	if !replaced {
		out = append(out, payload...)
	}
	return append(out, tail...)
}

// sealedStream returns the golden frames sealed in goldenOrder as the
// main node's direction of one connection under key (nil: CRC-32C), and
// the offset where each frame ends.
func sealedStream(key []byte) ([]byte, []int) {
	golden := goldenFrames()
	s := newSeal(key, "main", testMainNonce, testWorkerNonce)
	var out []byte
	var ends []int
	for _, name := range goldenOrder {
		out = append(out, sealFrame(s, golden[name])...)
		ends = append(ends, len(out))
	}
	return out, ends
}

// openSeal returns the reading side of sealedStream's seal.
func openSeal(key []byte) *seal { return newSeal(key, "main", testMainNonce, testWorkerNonce) }

func TestSealRoundTrip(t *testing.T) {
	for _, key := range [][]byte{nil, testKey[:16], testKey} {
		data, _ := sealedStream(key)
		if n, err := decodeFrames(data, openSeal(key)); err != nil || n != len(goldenOrder) {
			t.Errorf("key of %d bytes: decoded %d frames of %d, error %v", len(key), n, len(goldenOrder), err)
		}
	}
}

// TestSealCatchesEveryBitFlip flips each bit of a sealed stream in turn:
// every flip must end the decoding at or before the frame it hit, with a
// frame error, an integrity error or a frame cut short, and never be
// taken for a good frame; with a key and without.
func TestSealCatchesEveryBitFlip(t *testing.T) {
	for _, key := range [][]byte{nil, testKey} {
		data, ends := sealedStream(key)
		for i := range 8 * len(data) {
			bad := slices.Clone(data)
			bad[i/8] ^= 1 << (i % 8)
			n, err := decodeFrames(bad, openSeal(key))
			hit, _ := slices.BinarySearch(ends, i/8+1) // the frame holding byte i/8
			if err == nil || n > hit {
				t.Fatalf("key of %d bytes: bit %d (frame %d) flipped: %d frames decoded, error %v", len(key), i, hit, n, err)
			}
			if !errors.Is(err, ErrIntegrity) && !errors.Is(err, ErrFrame) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("key of %d bytes: bit %d flipped: error %v, want an integrity or frame error", len(key), i, err)
			}
		}
	}
}

// TestSealKeyedStream: under a key, a frame moved, replayed or sealed for
// another connection or the other direction fails its check, and the
// payload does not travel in clear.
func TestSealKeyedStream(t *testing.T) {
	data, ends := sealedStream(testKey)
	frame := func(i int) []byte {
		lo := 0
		if i > 0 {
			lo = ends[i-1]
		}
		return data[lo:ends[i]]
	}
	cases := map[string][]byte{
		"swapped":   slices.Concat(frame(0), frame(1), frame(2), frame(4), frame(3)),
		"replayed":  slices.Concat(frame(0), frame(0)),
		"dropped":   slices.Concat(frame(0), frame(2)),
		"truncated": data[:ends[3]-1],
	}
	for name, bad := range cases {
		if _, err := decodeFrames(bad, openSeal(testKey)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for name, s := range map[string]*seal{
		"other connection": newSeal(testKey, "main", testWorkerNonce, testMainNonce),
		"other direction":  newSeal(testKey, "worker", testMainNonce, testWorkerNonce),
		"other key":        newSeal(testKey[:16], "main", testMainNonce, testWorkerNonce),
		"no key":           newSeal(nil, "main", testMainNonce, testWorkerNonce),
	} {
		if n, err := decodeFrames(data, s); n != 0 || !errors.Is(err, ErrIntegrity) {
			t.Errorf("%s: %d frames decoded, error %v; want an integrity error at the first", name, n, err)
		}
	}
	golden := goldenFrames()
	raw := golden["deltas.bin"]
	payload := raw[prefixBytes+binary.LittleEndian.Uint32(raw[1:5]):]
	if bytes.Contains(data, payload[len(payload)-32:]) {
		t.Error("the deltas payload travels in clear under a key")
	}
}

// FuzzSealedFrames feeds arbitrary bytes to a sealed frame decoder, with
// a key and without: it must never panic, and under a key it must accept
// nothing but whole genuine frames: a stream it decodes to the end is a
// prefix of the genuine one, ending between frames.
func FuzzSealedFrames(f *testing.F) {
	for _, keyed := range []bool{false, true} {
		var key []byte
		if keyed {
			key = testKey
		}
		data, ends := sealedStream(key)
		f.Add(keyed, data)
		f.Add(keyed, data[:ends[2]])
		bad := slices.Clone(data)
		bad[ends[3]-3] ^= 4
		f.Add(keyed, bad)
	}
	genuine, ends := sealedStream(testKey)
	f.Fuzz(func(t *testing.T, keyed bool, data []byte) {
		if !keyed {
			decodeFrames(data, openSeal(nil))
			return
		}
		n, err := decodeFrames(data, openSeal(testKey))
		if err != nil {
			return
		}
		want := 0
		if n > 0 {
			want = ends[min(n, len(ends))-1]
		}
		if n > len(ends) || len(data) != want || !bytes.Equal(data, genuine[:want]) {
			t.Fatalf("accepted %d frames in %d bytes that are not the genuine stream's first %d frames", n, len(data), n)
		}
	})
}
