package stream

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestDigestAppend: the digest of A followed by B, from the two digests
// alone, is the CRC-32C of A‖B as hash/crc32 computes it, for random
// lengths including empty runs on either side.
func TestDigestAppend(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	buf := make([]byte, RecordBytes*5000)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	lengths := []uint64{0, 1, 2, 3, 7, 8, 113, 2500}
	for range 200 {
		lengths = append(lengths, rng.Uint64N(2501))
	}
	for i, la := range lengths {
		lb := lengths[(i*7+3)%len(lengths)]
		// A and B from anywhere in buf: they need not be adjacent there.
		oa, ob := rng.Uint64N(5001-la), rng.Uint64N(5001-lb)
		a, b := buf[oa*RecordBytes:(oa+la)*RecordBytes], buf[ob*RecordBytes:(ob+lb)*RecordBytes]
		got := Digest{}.Update(a).Append(Digest{}.Update(b))
		want := crc32.Update(crc32.Checksum(a, castagnoli), castagnoli, b)
		if got.CRC != want || got.Records != uint64(len(a)+len(b))/RecordBytes {
			t.Fatalf("%d then %d records: Append gives %+v, crc32 over the concatenation %#08x",
				len(a)/RecordBytes, len(b)/RecordBytes, got, want)
		}
	}
	// Appending to the empty digest, and appending an empty one, change
	// nothing.
	d := Digest{}.Update(buf[:90])
	if (Digest{}).Append(d) != d || d.Append(Digest{}) != d {
		t.Errorf("the empty digest is not Append's identity: %+v", d)
	}
}

// TestMulmod checks the GF(2) arithmetic against its definitions: 1 is
// the identity, multiplication commutes, and x^(8·9) is eight steps of
// multiplying by x, nine times.
func TestMulmod(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 1000 {
		a, b := rng.Uint32(), rng.Uint32()
		if mulmod(a, polyOne) != a || mulmod(polyOne, a) != a {
			t.Fatalf("1·%#x ≠ %#x", a, a)
		}
		if mulmod(a, b) != mulmod(b, a) {
			t.Fatalf("%#x·%#x does not commute", a, b)
		}
	}
	x := uint32(polyOne)
	for range 8 * RecordBytes {
		x = mulmod(x, polyOne>>1) // ·x
	}
	if got := x8n(1); got != x {
		t.Errorf("x8n(1) = %#08x, x^72 by steps %#08x", got, x)
	}
}

// digestOfFile is the CRC-32C of the record bytes [lo, hi) of data, a
// whole binary stream.
func digestOfFile(data []byte, lo, hi uint64) Digest {
	return Digest{Records: hi - lo, CRC: crc32.Checksum(data[RecordOffset(lo):RecordOffset(hi)], castagnoli)}
}

// TestReaderDigest: a Reader's digest is that of the records Read
// returned, in any chunking and through any iotest wrapper, and stops
// before a bad record; File.Digest gives the same for any range.
func TestReaderDigest(t *testing.T) {
	const n, bad = 300_000, 250_001 // more than two buffers of 2^17 records
	us := randomUpdates(rand.New(rand.NewPCG(15, 16)), 1000, n)
	data := encode(t, 1000, us...)
	f, err := Open(writeFile(t, data))
	requireNoError(t, err)
	defer f.Close()
	for _, chunk := range []int{1, 1000, n} {
		r := f.Reader(1234, n)
		if _, err := readAll(r, chunk); err != nil {
			t.Fatal(err)
		}
		if got, want := r.Digest(), digestOfFile(data, 1234, n); got != want {
			t.Errorf("read %d at a time: digest %+v, want %+v", chunk, got, want)
		}
	}
	for _, lh := range [][2]uint64{{0, 0}, {0, n}, {5, 6}, {131071, 262145}} {
		d, err := f.Digest(context.Background(), lh[0], lh[1], nil)
		if want := digestOfFile(data, lh[0], lh[1]); err != nil || d != want {
			t.Errorf("File.Digest(%d, %d) = %+v, %v; want %+v", lh[0], lh[1], d, err, want)
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	calls := 0
	_, err = f.Digest(ctx, 0, n, func(uint64) {
		if calls++; calls == 2 {
			cancel(stop)
		}
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("File.Digest cancelled after 2 reads: %v after %d", err, calls)
	}

	data[RecordOffset(bad)] = 7 // type byte
	f2, err := Open(writeFile(t, data))
	requireNoError(t, err)
	defer f2.Close()
	r := f2.Reader(0, n)
	if _, err := readAll(r, 4096); !errors.Is(err, ErrBadUpdateType) {
		t.Fatalf("read past a bad record: %v", err)
	}
	if got, want := r.Digest(), digestOfFile(data, 0, bad); got != want {
		t.Errorf("stopped at a bad record: digest %+v, want %+v (the records before it)", got, want)
	}
	for _, w := range wrappers {
		data := encode(t, 1000, us[:5000]...)
		r, err := NewReader(w.wrap(bytes.NewReader(data)))
		requireNoError(t, err)
		if _, err := readAll(r, 333); err != nil {
			t.Fatal(err)
		}
		if got, want := r.Digest(), digestOfFile(data, 0, 5000); got != want {
			t.Errorf("%s: digest %+v, want %+v", w.name, got, want)
		}
	}
}

// TestCursorDigest: the Cursor's digest covers [0, Pos()) across Reads,
// Skips with the caller's digest and SeekDigest, and is unknown after a
// plain Seek.
func TestCursorDigest(t *testing.T) {
	const n = 20_000
	us := randomUpdates(rand.New(rand.NewPCG(17, 18)), 500, n)
	data := encode(t, 500, us...)
	t.Run("binary", func(t *testing.T) { testCursorDigest(t, data, data) })
	// A packed copy: the same digests, those of the binary records.
	t.Run("packed", func(t *testing.T) { testCursorDigest(t, pack(t, 500, 512, us...), data) })
}

// testCursorDigest runs TestCursorDigest's checks over file, a stream of
// n records whose binary encoding is data.
func testCursorDigest(t *testing.T, file, data []byte) {
	const n = 20_000
	f, err := Open(writeFile(t, file))
	requireNoError(t, err)
	defer f.Close()
	c := f.Cursor()
	check := func(what string, wantKnown bool) {
		t.Helper()
		d, ok := c.Digest()
		if ok != wantKnown || ok && d != digestOfFile(data, 0, c.Pos()) {
			t.Errorf("%s: digest %+v, %v at %d; want known %v, %+v", what, d, ok, c.Pos(), wantKnown, digestOfFile(data, 0, c.Pos()))
		}
	}
	check("new", true)
	buf := make([]Update, 777)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	check("after a Read", true)
	requireNoError(t, c.Skip(digestOfFile(data, 777, 5000)))
	check("after a Skip", true)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	check("after a Skip and a Read", true)
	if err := c.Skip(Digest{Records: n}); err == nil {
		t.Error("Skip past the end: no error")
	}
	requireNoError(t, c.Seek(9000))
	check("after a Seek", false)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	requireNoError(t, c.Skip(Digest{Records: 10}))
	check("after a Seek, a Read and a Skip", false)
	requireNoError(t, c.SeekDigest(digestOfFile(data, 0, 12345)))
	check("after SeekDigest", true)
	if _, err := readAll(c, 1000); err != nil {
		t.Fatal(err)
	}
	check("at the end", true)
	requireNoError(t, c.Seek(0))
	check("after Seek(0)", true)
}
