package distributor

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"sketchcc/sketch"
)

var update = flag.Bool("update", false, "rewrite testdata/frames/*.bin")

// pipe returns a frame reader and writer over the two ends of a
// net.Pipe, past the handshake's limits.
func pipe(t *testing.T) (*frameReader, *frameWriter) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	fr := newFrameReader(b, nil)
	fr.maxHeader, fr.maxPayload = maxHeaderBytes, 1<<20
	return fr, newFrameWriter(a, nil)
}

func TestCodecRoundTrip(t *testing.T) {
	msgs := []struct {
		t       messageType
		m       any
		payload []byte
	}{
		{helloMsg, &hello{Name: "main-1", Nonce: bytes.Repeat([]byte{7}, nonceBytes), MAC: []byte{}}, nil},
		{helloMsg, &hello{Name: "w", Nonce: bytes.Repeat([]byte{1}, nonceBytes), MAC: bytes.Repeat([]byte{2}, 32)}, nil},
		{paramsMsg, &params{Vertices: 1 << 17, Factor: 1.5, Seed: 1<<63 + 5, Rows: 34, Columns: 24, MaxBatchUpdates: 3268, MAC: []byte{1, 2, 3}}, nil},
		{readyMsg, &ready{Threads: 16}, nil},
		{batchesMsg, []batchEntry{{ID: 1, Vertex: 5, Updates: 2, Bytes: 3}, {ID: 1 << 40, Vertex: 1<<32 - 1, Updates: 1, Bytes: 1<<32 - 1}},
			[]byte{0, 1, 0, 0, 3}},
		{deltasMsg, []uint64{9, 1 << 50}, []byte("0123456789abcdef")},
		{stopMsg, &stop{Reason: "main node done"}, nil},
		{errorMsg, &failure{Reason: "authentication failed"}, nil},
	}
	fr, fw := pipe(t)
	go func() {
		for _, m := range msgs {
			if _, err := fw.write(m.t, m.m, m.payload); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for _, want := range msgs {
		typ, h, n, err := fr.next()
		requireNoError(t, err)
		if typ != want.t || n != len(want.payload) {
			t.Fatalf("got %s frame with %d-byte payload, want %s with %d", typ, n, want.t, len(want.payload))
		}
		// Decode into a fresh value of the same type.
		var got any
		switch want.m.(type) {
		case []batchEntry:
			var s []batchEntry
			requireNoError(t, fr.dec.decode(h, &s, maxFrameBatches))
			got = s
		case []uint64:
			var s []uint64
			requireNoError(t, fr.dec.decode(h, &s, maxFrameBatches))
			got = s
		default:
			v := reflect.New(reflect.TypeOf(want.m).Elem())
			requireNoError(t, fr.dec.decode(h, v.Interface(), 0))
			got = v.Interface()
		}
		if !reflect.DeepEqual(got, want.m) {
			t.Errorf("%s: decoded %+v, want %+v", typ, got, want.m)
		}
		p, err := fr.payload(nil, n)
		requireNoError(t, err)
		if !bytes.Equal(p, want.payload) {
			t.Errorf("%s: payload %x, want %x", typ, p, want.payload)
		}
	}
}

func TestNodeMetaRoundTrip(t *testing.T) {
	m := NodeMeta{Role: RoleWorker, Addr: "127.0.0.1:7100", Name: "w1", Incarnation: 1 << 60, Leaving: true}
	got, err := decodeMeta(encodeMeta(m))
	requireNoError(t, err)
	if got != m {
		t.Errorf("got %+v, want %+v", got, m)
	}
	// The metadata of a worker from before the thread count was dropped
	// (8 in the reserved field) decodes, and today's differs from it only
	// there: either reads the other's.
	old := []byte("\x96\xa6worker\xae127.0.0.1:7100\x08\xa2w1\xcf\x10\x00\x00\x00\x00\x00\x00\x00\xc3")
	if got, err := decodeMeta(old); err != nil || got != m {
		t.Errorf("metadata with a thread count decodes as %+v, %v; want %+v", got, err, m)
	}
	if b, want := encodeMeta(m), bytes.Replace(old, []byte{0x08}, []byte{0x00}, 1); !bytes.Equal(b, want) {
		t.Errorf("encodeMeta = %x, want %x", b, want)
	}
	if _, err := decodeMeta([]byte{0x96, 0xa1}); err == nil {
		t.Error("truncated metadata decoded")
	}
}

// frameBytes encodes one frame.
func frameBytes(t messageType, m any, payload []byte) []byte {
	var b bytes.Buffer
	fw := newFrameWriter(&b, nil)
	fw.write(t, m, payload)
	return b.Bytes()
}

// rawFrame builds a frame prefix by hand, with any lengths.
func rawFrame(t messageType, headerLen, payloadLen uint32, rest []byte) []byte {
	b := []byte{byte(t)}
	b = binary.LittleEndian.AppendUint32(b, headerLen)
	b = binary.LittleEndian.AppendUint32(b, payloadLen)
	return append(b, rest...)
}

func TestFrameReader_Failure(t *testing.T) {
	f := func(name string, in []byte, wantErr error, wantText string) {
		t.Helper()
		fr := newFrameReader(bytes.NewReader(in), nil)
		fr.maxHeader, fr.maxPayload = maxHeaderBytes, 1<<16
		_, h, n, err := fr.next()
		if err == nil {
			// A valid prefix and header: the payload or the header's
			// contents must be what fails.
			var entries []batchEntry
			err = fr.dec.decode(h, &entries, maxFrameBatches)
			if err == nil {
				_, err = fr.payload(nil, n)
			}
		}
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if wantErr != nil && !errors.Is(err, wantErr) {
			t.Errorf("%s: error %v, want %v", name, err, wantErr)
		}
		if !strings.Contains(err.Error(), wantText) {
			t.Errorf("%s: error %q does not say %q", name, err, wantText)
		}
	}
	good := frameBytes(batchesMsg, []batchEntry{{ID: 1, Vertex: 2, Updates: 2, Bytes: 3}}, []byte{idsGaps, 3, 0})
	f("empty", nil, io.EOF, "EOF")
	f("truncated prefix", good[:5], io.ErrUnexpectedEOF, "unexpected EOF")
	f("truncated header", good[:prefixBytes+2], io.ErrUnexpectedEOF, "unexpected EOF")
	f("truncated payload", good[:len(good)-1], io.ErrUnexpectedEOF, "unexpected EOF")
	f("oversized header", rawFrame(batchesMsg, maxHeaderBytes+1, 0, nil), ErrFrame, "header of 106497 bytes, limit 106496")
	f("oversized payload", rawFrame(batchesMsg, 1, 1<<32-1, nil), ErrFrame, "payload of 4294967295 bytes, limit 65536")
	f("unknown type", rawFrame(200, 0, 0, nil), ErrFrame, "unknown message type 200")
	f("type zero", make([]byte, 64), ErrFrame, "unknown message type 0")
	f("list longer than header", rawFrame(batchesMsg, 3, 0, []byte{0xdc, 0xff, 0xff}), nil, "list of 65535 entries")
	f("list over the limit", rawFrame(batchesMsg, 5, 0, []byte{0xdd, 0xff, 0xff, 0xff, 0xff}), nil, "list of 4294967295 entries")
	f("trailing header bytes", rawFrame(batchesMsg, 2, 0, []byte{0x90, 0x90}), nil, "1 bytes after the header")
}

func TestReadVersion(t *testing.T) {
	f := func(in, wantText string) {
		t.Helper()
		err := newFrameReader(strings.NewReader(in), nil).readVersion()
		if wantText == "" {
			requireNoError(t, err)
			return
		}
		if err == nil || !strings.Contains(err.Error(), wantText) {
			t.Errorf("readVersion(%q) = %v, want an error saying %q", in, err, wantText)
		}
	}
	f("sketchcc-batch/6", "")
	f("sketchcc-batch/5", `peer speaks "sketchcc-batch/5"`)
	f("sketchcc-batch/4", `peer speaks "sketchcc-batch/4"`)
	f("sketchcc-batch/3", `peer speaks "sketchcc-batch/3"`)
	f("GET / HTTP/1.1\r\nHost", "not a sketchcc peer")
	f("sketch", "unexpected EOF")
}

// handshake runs both sides of the handshake over a net.Pipe.
func handshake(t *testing.T, mainKey, workerKey []byte, p sketch.Params) (mainErr, workerErr error) {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	var wg sync.WaitGroup
	wg.Go(func() {
		_, workerErr = workerHandshake(newFrameReader(b, nil), newFrameWriter(b, nil), workerKey, "w", 1, DefaultMaxFrameBytes)
		b.Close()
	})
	_, mainErr = mainHandshake(newFrameReader(a, nil), newFrameWriter(a, nil), mainKey, "m", p, 100, DefaultMaxFrameBytes)
	a.Close()
	wg.Wait()
	return mainErr, workerErr
}

func TestHandshake(t *testing.T) {
	p, err := sketch.NewParams(1000, 1, 7)
	requireNoError(t, err)
	key := bytes.Repeat([]byte{1}, 32)
	other := bytes.Repeat([]byte{2}, 32)

	mErr, wErr := handshake(t, key, key, p)
	requireNoError(t, mErr)
	requireNoError(t, wErr)
	mErr, wErr = handshake(t, nil, nil, p)
	requireNoError(t, mErr)
	requireNoError(t, wErr)

	for _, c := range []struct {
		name string
		m, w []byte
	}{
		{"wrong key", key, other}, {"worker without key", key, nil}, {"main without key", nil, key}} {
		mErr, wErr = handshake(t, c.m, c.w, p)
		if !errors.Is(mErr, ErrAuth) {
			t.Errorf("%s: main node's error %v, want ErrAuth", c.name, mErr)
		}
		var pe *PeerError
		if !errors.As(wErr, &pe) || !strings.Contains(pe.Reason, "authentication failed") {
			t.Errorf("%s: worker's error %v, want the main node's refusal", c.name, wErr)
		}
	}
}

func TestHandshakeWrongVersion(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go io.Copy(io.Discard, b)
	go io.WriteString(b, "sketchcc-batch/9")
	p, _ := sketch.NewParams(10, 1, 1)
	_, err := mainHandshake(newFrameReader(a, nil), newFrameWriter(a, nil), nil, "m", p, 10, DefaultMaxFrameBytes)
	if !errors.Is(err, ErrVersion) {
		t.Errorf("got %v, want ErrVersion", err)
	}
	b.Close()
}

// goldenFrames are the seeds of FuzzFrameDecoder and the frames that
// TestGoldenFrames decodes; -update rewrites testdata/frames.
func goldenFrames() map[string][]byte {
	nonce := bytes.Repeat([]byte{0xab}, nonceBytes)
	p, _ := sketch.NewParams(16, 1, 3)
	// Bucket values by hand: the golden bytes must not follow the hash.
	delta := make([]sketch.Bucket, p.BucketsPerVertex())
	for i := range delta {
		delta[i] = sketch.Bucket{Alpha: uint64(i) * 0x0101, Gamma: ^uint64(i)}
	}
	// A delta with an empty deterministic bucket, rows 0-2 of column 0
	// and row 5 of the last column: both masks and a run of buckets.
	sparse := make([]sketch.Bucket, p.BucketsPerVertex())
	for _, i := range []int{1, 2, 3, 1 + (p.Columns()-1)*p.Rows() + 5} {
		sparse[i] = delta[i]
	}
	dc := newDeltaCodec(p)
	// One batch in each form, one whose ids all cancel, one sorted.
	entries, payload := encodeBatches(p.Vertices(),
		batch{3, []uint32{1, 2, 5, 9}}, batch{4, []uint32{0, 1, 2, 3, 5, 6, 7, 8}},
		batch{5, []uint32{7, 7}}, batch{6, []uint32{15, 1, 15, 2, 15}})
	return map[string][]byte{
		"hello.bin":   frameBytes(helloMsg, &hello{Name: "main", Nonce: nonce}, nil),
		"params.bin":  frameBytes(paramsMsg, &params{Vertices: 16, Factor: 1, Seed: 3, Rows: p.Rows(), Columns: p.Columns(), MaxBatchUpdates: 8, MAC: nonce}, nil),
		"ready.bin":   frameBytes(readyMsg, &ready{Threads: 2}, nil),
		"batches.bin": frameBytes(batchesMsg, entries, payload),
		"deltas.bin":  frameBytes(deltasMsg, []uint64{1, 2}, dc.append(dc.append(nil, 3, delta), 4, sparse)),
		"stop.bin":    frameBytes(stopMsg, &stop{Reason: "done"}, nil),
		"error.bin":   frameBytes(errorMsg, &failure{Reason: "authentication failed"}, nil),
	}
}

func TestGoldenFrames(t *testing.T) {
	dir := filepath.Join("testdata", "frames")
	for name, b := range goldenFrames() {
		path := filepath.Join(dir, name)
		if *update {
			requireNoError(t, os.MkdirAll(dir, 0o755))
			requireNoError(t, os.WriteFile(path, b, 0o644))
			continue
		}
		want, err := os.ReadFile(path)
		requireNoError(t, err)
		if !bytes.Equal(b, want) {
			t.Errorf("%s: encoding changed (a protocol change needs a new version string); run with -update after review\ngot  %x\nwant %x", name, b, want)
		}
		if n, err := decodeFrames(want, nil); err != nil || n != 1 {
			t.Errorf("%s: decoded %d frames, error %v", name, n, err)
		}
	}
}
