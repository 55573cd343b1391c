package distributor

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"sketchcc/sketch"
)

// decodeFrames decodes data as the frames that follow a handshake, the
// way the worker's and the main node's readers do, with the golden
// frames' graph (16 vertices, seed 3, batches of at most 8), checking
// each with s (nil: frames as the handshake sends them, without a
// trailer). It returns the frames decoded and the first error; io.EOF
// between frames ends it cleanly.
func decodeFrames(data []byte, s *seal) (int, error) {
	p, _ := sketch.NewParams(16, 1, 3)
	per := p.BucketsPerVertex()
	dc := newDeltaCodec(p)
	fr := newFrameReader(bytes.NewReader(data), nil)
	fr.maxHeader, fr.maxPayload = maxHeaderBytes, 1<<20
	fr.seal = s
	var (
		entries []batchEntry
		ids     []uint64
		delta   = make([]sketch.Bucket, per)
	)
	for n := 0; ; n++ {
		t, h, size, err := fr.next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if size != 0 && t != batchesMsg && t != deltasMsg {
			return n, fmt.Errorf("%w: %s frame with a %d-byte payload", ErrFrame, t, size)
		}
		switch t {
		case helloMsg:
			err = fr.dec.decode(h, &hello{}, 0)
		case paramsMsg:
			err = fr.dec.decode(h, &params{}, 0)
		case readyMsg:
			err = fr.dec.decode(h, &ready{}, 0)
		case stopMsg:
			err = fr.dec.decode(h, &stop{}, 0)
		case errorMsg:
			err = fr.dec.decode(h, &failure{}, 0)
		case batchesMsg:
			// The payload first, as the readers do: nothing of a frame
			// is used before its check.
			var payload []byte
			if payload, err = fr.payload(nil, size); err == nil {
				var total int
				if err = fr.dec.decode(h, &entries, maxFrameBatches); err == nil {
					if total, err = checkBatches(entries, size, p.Vertices(), 8, fr.maxPayload); err == nil {
						ids := make([]uint32, 0, total)
						for _, e := range entries {
							if ids, err = decodeBatch(ids, payload[:e.Bytes], int(e.Updates), e.Vertex, p.Vertices()); err != nil {
								break
							}
							payload = payload[e.Bytes:]
						}
						if err == nil && len(ids) != total {
							panic("BUG: decoded a batch of the wrong size")
						}
					}
				}
			}
		case deltasMsg:
			var payload []byte
			if payload, err = fr.payload(nil, size); err == nil {
				if err = fr.dec.decode(h, &ids, maxFrameBatches); err == nil {
					if err = checkDeltas(ids, size, dc); err == nil {
						rest := payload
						for range ids {
							if _, rest, err = dc.decode(delta, rest); err != nil {
								break
							}
						}
						if err == nil && len(rest) != 0 {
							err = fmt.Errorf("%d bytes after the deltas", len(rest))
						}
					}
				}
			}
		}
		if err != nil {
			return n, err
		}
	}
}

// FuzzFrameDecoder feeds arbitrary bytes to the frame decoder: it must
// never panic nor allocate past its limits, whatever the bytes say.
func FuzzFrameDecoder(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "frames", "*.bin"))
	var all []byte
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		all = append(all, b...)
	}
	f.Add(all)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := decodeFrames(data, nil)
		if err == nil && len(data) < n*prefixBytes {
			t.Fatalf("decoded %d frames from %d bytes", n, len(data))
		}
	})
}
