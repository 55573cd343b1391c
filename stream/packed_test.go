package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// pack returns the packed stream of us, blocks of blockRecords records.
func pack(tb testing.TB, vertices uint32, blockRecords uint64, us ...Update) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w, err := newPackedWriterBlock(&buf, Header{Vertices: vertices, Updates: uint64(len(us))}, blockRecords)
	requireNoError(tb, err)
	for _, u := range us {
		requireNoError(tb, w.Write(u))
	}
	requireNoError(tb, w.Close())
	return buf.Bytes()
}

// binaryDigest returns the digest of us as binary records.
func binaryDigest(us []Update) Digest {
	var b []byte
	for _, u := range us {
		b = append(b, record(byte(u.Type), u.Src, u.Dst)...)
	}
	return Digest{}.Update(b)
}

// TestPacked_RoundTrip packs random streams and reads them back through
// each iotest wrapper: same updates, the binary stream's digest, and the
// size the layout promises (1 + 2·IDBits bits a record).
func TestPacked_RoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		vertices uint32
		n        int
		block    uint64
	}{{2, 0, 8}, {2, 1, 8}, {3, 7, 8}, {3, 8, 8}, {3, 9, 8}, {1000, 1000, 64}, {1 << 17, 5000, 1024},
		{1<<17 + 1, 3000, 512}, {1 << 28, 2000, 256}, {1<<28 + 3, 2000, 256}, {1 << 31, 3000, 128},
		{1<<32 - 1, 3000, packedBlockRecords}, {1 << 13, 200_000, packedBlockRecords}} {
		us := randomUpdates(rng, tc.vertices, tc.n)
		data := pack(t, tc.vertices, tc.block, us...)
		l := newLayout(Header{tc.vertices, uint64(tc.n)}, tc.block)
		blocks := (uint64(tc.n) + tc.block - 1) / tc.block
		if want := PackedHeaderBytes + 4*blocks + l.payloadBytes(tc.block)*(blocks-min(blocks, 1)) +
			l.payloadBytes(uint64(tc.n)-tc.block*(blocks-min(blocks, 1))); uint64(len(data)) != want {
			t.Fatalf("%d updates of %d vertices pack to %d bytes, want %d", tc.n, tc.vertices, len(data), want)
		}
		for _, w := range wrappers {
			t.Run(fmt.Sprintf("vertices=%d/updates=%d/%s", tc.vertices, tc.n, w.name), func(t *testing.T) {
				r, err := NewReader(w.wrap(bytes.NewReader(data)))
				if w.name == "timeout" && errors.Is(err, iotest.ErrTimeout) {
					// Its first 12 bytes tell a packed header, then 20
					// more are read: the wrapper times out on that second
					// read, and a header cut short is not retried.
					return
				}
				requireNoError(t, err)
				if h := r.Header(); h != (Header{tc.vertices, uint64(tc.n)}) {
					t.Fatalf("header %+v", h)
				}
				got, err := readAll(r, 999)
				requireNoError(t, err)
				if !slices.Equal(got, us) {
					t.Fatalf("read back %d updates, differing from the %d written", len(got), len(us))
				}
				if d, want := r.Digest(), binaryDigest(us); d != want {
					t.Fatalf("digest %+v, the binary stream's is %+v", d, want)
				}
			})
		}
	}
}

// TestPacked_Detected: NewReader and ReadHeader tell a packed stream
// from a binary one by its first 8 bytes, IsPacked is right about both,
// and a packed header cut short says it is one.
func TestPacked_Detected(t *testing.T) {
	data := pack(t, 1000, 8, ins(1, 2), del(1, 2))
	bin := encode(t, 1000, ins(1, 2), ins(2, 3), ins(3, 4))
	if !IsPacked(data) || IsPacked(bin) || IsPacked(data[:7]) {
		t.Fatal("IsPacked is wrong about a packed, a binary or a short input")
	}
	for _, tc := range []struct {
		data []byte
		h    Header
		f    Format
	}{{data, Header{1000, 2}, FormatPacked}, {bin, Header{1000, 3}, FormatBinary}} {
		h, f, err := ReadHeader(bytes.NewReader(tc.data))
		if err != nil || h != tc.h || f != tc.f {
			t.Errorf("ReadHeader: %+v, %v, %v; want %+v, %v", h, f, err, tc.h, tc.f)
		}
		r, err := NewReader(bytes.NewReader(tc.data))
		requireNoError(t, err)
		if got, err := readAll(r, 10); err != nil || r.Header() != tc.h || uint64(len(got)) != tc.h.Updates {
			t.Errorf("%v stream: %d updates, header %+v, %v", tc.f, len(got), r.Header(), err)
		}
	}
	_, err := NewReader(bytes.NewReader(data[:20]))
	checkFormatError(t, err, io.ErrUnexpectedEOF, where{index: -1, offset: 0}, "")
	if !strings.Contains(err.Error(), "20 of 32 packed header bytes") {
		t.Errorf("a packed header cut short: %v", err)
	}
	_, _, err = ReadHeader(bytes.NewReader(corrupt(data, 8*13)))
	checkFormatError(t, err, ErrChecksum, where{index: -1, offset: 0}, "")
}

// corrupt returns a copy of data with bit i flipped.
func corrupt(data []byte, i int) []byte {
	c := slices.Clone(data)
	c[i/8] ^= 1 << (i % 8)
	return c
}

// checkPrefix reads data to its end and checks that it stops with an
// error (a *FormatError or a short input) after a prefix of us.
func checkBadPacked(t *testing.T, data []byte, us []Update, what string) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		checkStreamError(t, err)
		return
	}
	got, err := readAll(r, 13)
	if err == nil {
		t.Fatalf("%s: read cleanly (%d updates)", what, len(got))
	}
	checkStreamError(t, err)
	if len(got) > len(us) || !slices.Equal(got, us[:len(got)]) {
		t.Fatalf("%s: %d updates before %v are not a prefix of the stream", what, len(got), err)
	}
	var fe *FormatError
	if errors.As(err, &fe) && fe.Index != int64(len(got)) {
		t.Fatalf("%s: error at update %d after %d updates: %v", what, fe.Index, len(got), err)
	}
}

// TestPacked_EveryFlipAndCut flips every bit and cuts at every length of
// a stream of 5 blocks: each is an error, after a prefix of the updates.
func TestPacked_EveryFlipAndCut(t *testing.T) {
	us := randomUpdates(rand.New(rand.NewPCG(5, 6)), 1000, 37)
	data := pack(t, 1000, 8, us...)
	for i := range 8 * len(data) {
		checkBadPacked(t, corrupt(data, i), us, fmt.Sprintf("bit %d flipped", i))
	}
	for n := range len(data) {
		checkBadPacked(t, data[:n], us, fmt.Sprintf("cut to %d bytes", n))
	}
	checkBadPacked(t, append(slices.Clone(data), 0), us, "a byte appended")
}

// TestPacked_Errors checks what the errors say: the block, the record
// index and the byte offset.
func TestPacked_Errors(t *testing.T) {
	us := randomUpdates(rand.New(rand.NewPCG(7, 8)), 1000, 40)
	data := pack(t, 1000, 16, us...)
	l := newLayout(Header{1000, 40}, 16)
	blk1 := int(l.offset(1))
	read := func(data []byte) ([]Update, error) {
		r, err := NewReader(bytes.NewReader(data))
		requireNoError(t, err)
		return readAll(r, 1000)
	}
	t.Run("checksum", func(t *testing.T) {
		got, err := read(corrupt(data, 8*(blk1+7)))
		checkFormatError(t, err, ErrChecksum, where{index: 16, offset: int64(blk1)}, "")
		if len(got) != 16 || !strings.Contains(err.Error(), "block 1 of 3, records [16, 32)") {
			t.Errorf("%d updates, then %v", len(got), err)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		got, err := read(data[:blk1+10])
		checkFormatError(t, err, ErrTruncated, where{index: 16, offset: int64(blk1)}, "")
		if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 16 || !strings.Contains(err.Error(), "block 1 of 3 ends after 10 of its") {
			t.Errorf("%d updates, then %v", len(got), err)
		}
	})
	t.Run("open truncated", func(t *testing.T) {
		_, err := Open(writeFile(t, data[:blk1+10]))
		checkFormatError(t, err, ErrTruncated, where{index: 16, offset: int64(blk1)}, err.(*FormatError).Name)
	})
	t.Run("open trailing", func(t *testing.T) {
		_, err := Open(writeFile(t, append(slices.Clone(data), 0)))
		checkFormatError(t, err, ErrTrailing, where{index: 40, offset: int64(len(data))}, err.(*FormatError).Name)
	})
}

// TestPacked_BadRecords: records whose block checks out but which fail a
// check (an id out of range, a self-loop) are errors naming the record.
func TestPacked_BadRecords(t *testing.T) {
	for _, tc := range []struct {
		name     string
		src, dst uint32
		sentinel error
	}{{"range", 3, 6, ErrVertexRange}, {"self-loop", 4, 4, ErrSelfLoop}} {
		t.Run(tc.name, func(t *testing.T) {
			// Written for 8 vertices (3-bit ids), then relabelled as 5.
			var buf bytes.Buffer
			w, err := newPackedWriterBlock(&buf, Header{Vertices: 8, Updates: 12}, 8)
			requireNoError(t, err)
			for i := range 12 {
				u := ins(1, 2)
				if i == 10 {
					u = ins(tc.src, tc.dst)
					w.put(uint64(u.Src)<<1, 4) // the Writer refuses a self-loop
					w.put(uint64(u.Dst), 3)
					w.n++
					continue
				}
				requireNoError(t, w.Write(u))
			}
			requireNoError(t, w.Close())
			data := buf.Bytes()
			binary.LittleEndian.PutUint32(data[12:16], 5)
			binary.LittleEndian.PutUint32(data[28:32], crc32.Checksum(data[:28], castagnoli))
			r, err := NewReader(bytes.NewReader(data))
			requireNoError(t, err)
			got, err := readAll(r, 100)
			l := newLayout(Header{5, 12}, 8)
			checkFormatError(t, err, tc.sentinel, where{index: 10, offset: l.offset(1) + 4 + 2*7/8}, "")
			if len(got) != 10 {
				t.Errorf("%d updates before the bad one, want 10", len(got))
			}
		})
	}
}

// TestPacked_FileRanges reads one packed file through Readers of
// random ranges, concurrently: each gives its records and their binary
// digest, and File.Digest agrees.
func TestPacked_FileRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 20_000
	us := randomUpdates(rng, 1<<17, n)
	path := writeFile(t, pack(t, 1<<17, 512, us...))
	f, err := Open(path)
	requireNoError(t, err)
	defer f.Close()
	if f.Header() != (Header{1 << 17, n}) || f.BlockRecords() != 512 {
		t.Fatalf("header %+v, %d records a block", f.Header(), f.BlockRecords())
	}
	// A buffer that holds a block is read through, not replaced.
	buf := make([]byte, 4096)
	r := f.ReaderBuf(1000, 3000, buf)
	if got, err := readAll(r, 100); err != nil || !slices.Equal(got, us[1000:3000]) || &r.pk.in.buf[0] != &buf[0] {
		t.Errorf("ReaderBuf: %d updates, %v; reads through the caller's buffer: %v", len(got), err, &r.pk.in.buf[0] == &buf[0])
	}
	// A buffer that also holds the decoding buffers lends them too: ReadRaw
	// decodes into it, and a range read allocates no buffer of its own.
	big := make([]byte, 1<<17)
	d := Digest{}
	var alias bool
	allocs := testing.AllocsPerRun(5, func() {
		r := f.ReaderBuf(1000, 3000, big)
		d = Digest{}
		for {
			recs, _, err := r.ReadRaw()
			if len(recs) == 0 {
				if err != io.EOF {
					t.Errorf("ReadRaw: %v, want io.EOF at the range's end", err)
				}
				break
			}
			alias = &recs[0] == &big[0]
			d = d.Update(recs)
		}
	})
	if want := binaryDigest(us[1000:3000]); d != want || !alias || allocs > 8 {
		t.Errorf("ReaderBuf with a large buffer: digest %+v, want %+v; records in the caller's buffer: %v; %.0f allocations a range",
			d, want, alias, allocs)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		lo := rng.Uint64N(n + 1)
		hi := lo + rng.Uint64N(n+10-lo)
		if g == 0 {
			lo, hi = 512, 1024 // one whole block
		}
		wg.Go(func() {
			var r *Reader
			if g%2 == 0 {
				r = f.Reader(lo, hi)
			} else {
				r = f.ReaderBuf(lo, hi, make([]byte, 100))
			}
			got, err := readAll(r, 777)
			hi := min(hi, n)
			if err != nil || !slices.Equal(got, us[lo:hi]) {
				t.Errorf("range [%d, %d): %d updates, %v", lo, hi, len(got), err)
				return
			}
			want := binaryDigest(us[lo:hi])
			if d := r.Digest(); d != want {
				t.Errorf("range [%d, %d): digest %+v, want %+v", lo, hi, d, want)
			}
			if d, err := f.Digest(t.Context(), lo, hi, nil); err != nil || d != want {
				t.Errorf("range [%d, %d): File.Digest %+v, %v, want %+v", lo, hi, d, err, want)
			}
		})
	}
	wg.Wait()
}

// TestPacked_ReadRaw: ReadRaw gives the binary stream's record bytes.
func TestPacked_ReadRaw(t *testing.T) {
	us := randomUpdates(rand.New(rand.NewPCG(11, 12)), 77777, 10_000)
	r, err := NewReader(bytes.NewReader(pack(t, 77777, 1024, us...)))
	requireNoError(t, err)
	var got []byte
	for {
		recs, first, err := r.ReadRaw()
		if uint64(len(got)/RecordBytes) != first {
			t.Fatalf("ReadRaw's first record %d after %d", first, len(got)/RecordBytes)
		}
		got = append(got, recs...)
		if err == io.EOF {
			break
		}
		requireNoError(t, err)
	}
	if want := encode(t, 77777, us...)[HeaderBytes:]; !bytes.Equal(got, want) {
		t.Fatalf("ReadRaw gave %d bytes, not the %d of the binary records", len(got), len(want))
	}
}

// TestPacked_NotRegular: a device that is not a packed stream (an empty
// one) is refused at open.
func TestPacked_NotRegular(t *testing.T) {
	f, err := Open(os.DevNull)
	if err == nil {
		f.Close()
		t.Fatal("Open(/dev/null) succeeded")
	}
	checkFormatError(t, err, ErrEmpty, where{index: -1, offset: 0}, os.DevNull)
}

// randomUpdatesSeed is randomUpdates from a fixed seed.
func randomUpdatesSeed(vertices uint32, n int) []Update {
	return randomUpdates(rand.New(rand.NewPCG(uint64(vertices), uint64(n))), vertices, n)
}

// TestPacked_ReadBinaryAt: a packed File reads back the bytes of its
// binary copy at any offset and length, and io.EOF past their end.
func TestPacked_ReadBinaryAt(t *testing.T) {
	us := randomUpdatesSeed(3000, 5000)
	bin := encode(t, 3000, us...)
	f, err := Open(writeFile(t, pack(t, 3000, 64, us...)))
	requireNoError(t, err)
	defer f.Close()
	rng := rand.New(rand.NewPCG(13, 14))
	for i := range 200 {
		off := rng.Int64N(int64(len(bin)) + 20)
		n := rng.IntN(3000)
		if i < 3 {
			off, n = []int64{0, 5, 12}[i], 100
		}
		b := make([]byte, n)
		got, err := f.ReadBinaryAt(b, off)
		want := bin[min(off, int64(len(bin))):min(off+int64(n), int64(len(bin)))]
		if !bytes.Equal(b[:got], want) || (got < n) != (err == io.EOF) || err != nil && err != io.EOF {
			t.Fatalf("ReadBinaryAt(%d bytes, %d): %d bytes, %v; want the %d bytes of the binary copy there", n, off, got, err, len(want))
		}
	}
}
