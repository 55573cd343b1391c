package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// testTable returns a table of 64 vertices with some edges sketched.
func testTable(t testing.TB) *sketch.Table {
	t.Helper()
	p, err := sketch.NewParams(64, 1.5, 42)
	if err != nil {
		t.Fatal(err)
	}
	tb := sketch.NewTable(p)
	for v := range uint32(64) {
		tb.ApplyBatch(v, []uint32{(v + 1) % 64, (v + 7) % 64})
	}
	return tb
}

func testMeta() Meta {
	return Meta{Stream: StreamID{Vertices: 64, Updates: 1000, Size: 12 + 9*1000, Head: 0xdeadbeef, Tail: 0x01020304},
		Updates: 640, Prefix: stream.Digest{Records: 640, CRC: 0xcafef00d}, BatchFactor: 0.5, GreedyValid: true,
		Forest: []stream.Edge{{Src: 0, Dst: 1}, {Src: 1, Dst: 8}, {Src: 5, Dst: 63}}}
}

func tableBytes(t testing.TB, tb *sketch.Table) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := tb.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tb := testTable(t)
	for _, m := range []Meta{testMeta(), {Stream: testMeta().Stream, Updates: 1000, Prefix: stream.Digest{Records: 1000, CRC: 7}, BatchFactor: 1}} {
		n, err := Write(dir, m, tb)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(Path(dir))
		if err != nil || fi.Size() != n {
			t.Fatalf("Write returned %d bytes; file: %v, %v", n, fi, err)
		}
		got, gt, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.Stream != m.Stream || got.Updates != m.Updates || got.Prefix != m.Prefix || got.BatchFactor != m.BatchFactor ||
			got.GreedyValid != m.GreedyValid || !slices.Equal(got.Forest, m.Forest) {
			t.Errorf("read %+v, wrote %+v", got, m)
		}
		if gp, tp := gt.Params(), tb.Params(); gp.Seed() != tp.Seed() || gp.Factor() != tp.Factor() || gp.Vertices() != tp.Vertices() || !bytes.Equal(tableBytes(t, gt), tableBytes(t, tb)) {
			t.Error("table read back differs from the one written")
		}
	}
	// The rename leaves no temporary file behind.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries after two writes, want 1", len(ents))
	}
}

// TestCorruptRefused flips one byte in every region of the file (and
// every byte of the small header and trailer) and truncates or pads it:
// Read must refuse each with ErrCorrupt and name the file.
func TestCorruptRefused(t *testing.T) {
	dir := t.TempDir()
	good := goodFile(t)
	forestEnd := headerBytes + 8*len(testMeta().Forest)
	var offsets []int
	for i := range forestEnd + tableHeaderBytes { // header, stream id, forest, table header
		offsets = append(offsets, i)
	}
	for i := forestEnd + tableHeaderBytes; i < len(good)-4; i += 997 { // buckets
		offsets = append(offsets, i)
	}
	offsets = append(offsets, len(good)-4, len(good)-3, len(good)-2, len(good)-1) // checksum
	refused := func(what string, data []byte) {
		t.Helper()
		if err := os.WriteFile(Path(dir), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, tb, err := Read(dir)
		if !errors.Is(err, ErrCorrupt) || tb != nil {
			t.Fatalf("%s: Read returned table %v, error %v; want ErrCorrupt", what, tb != nil, err)
		}
		if !strings.Contains(err.Error(), Path(dir)) {
			t.Fatalf("%s: error %q does not name the file", what, err)
		}
	}
	for _, off := range offsets {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(good)
			bad[off] ^= mask
			refused("byte "+strconv.Itoa(off)+" flipped", bad)
		}
	}
	for _, n := range []int{0, 7, headerBytes - 1, headerBytes, forestEnd + 3, forestEnd + tableHeaderBytes,
		len(good) / 2, len(good) - 4, len(good) - 1} {
		refused("truncated to "+strconv.Itoa(n), good[:n])
	}
	refused("padded", append(bytes.Clone(good), 0))
}

func TestMissing(t *testing.T) {
	dir := t.TempDir()
	_, _, err := Read(dir)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), Path(dir)) {
		t.Fatalf("Read of an empty directory: %v", err)
	}
}

func TestCheckMismatch(t *testing.T) {
	m := testMeta()
	p := testTable(t).Params()
	ok := Params{Stream: m.Stream, Seed: p.Seed(), SketchFactor: p.Factor()}
	if err := m.Check(p, ok); err != nil {
		t.Fatalf("matching parameters refused: %v", err)
	}
	if err := m.Check(p, Params{Stream: m.Stream}); err != nil {
		t.Fatalf("unset seed and factor refused: %v", err)
	}
	f := func(name, want string, change func(*Params)) {
		t.Helper()
		q := ok
		change(&q)
		err := m.Check(p, q)
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want ErrMismatch saying %q", name, err, want)
		}
	}
	f("vertices", "64 vertices", func(q *Params) { q.Stream.Vertices = 65 })
	f("updates", "1000 updates", func(q *Params) { q.Stream.Updates = 999 })
	f("size", "bytes", func(q *Params) { q.Stream.Size++ })
	f("head", "first or last MiB", func(q *Params) { q.Stream.Head++ })
	f("tail", "first or last MiB", func(q *Params) { q.Stream.Tail++ })
	f("seed", "seed 42", func(q *Params) { q.Seed = 43 })
	f("factor", "sketch factor 1.5", func(q *Params) { q.SketchFactor = 1 })
}

func TestIdentify(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.bin"), filepath.Join(dir, "b.bin")
	testgraph.WriteRandomStream(t, a, 100, 200_000, 1, false) // 1.7 MiB: head and tail differ
	testgraph.WriteRandomStream(t, b, 100, 200_000, 2, false)
	ia, err := Identify(a)
	if err != nil {
		t.Fatal(err)
	}
	if ia.Vertices != 100 || ia.Updates != 200_000 || ia.Size != 12+9*200_000 {
		t.Errorf("Identify(a) = %+v", ia)
	}
	ib, err := Identify(b)
	if err != nil {
		t.Fatal(err)
	}
	if ib.Head == ia.Head || ib.Tail == ia.Tail {
		t.Errorf("streams of other seeds hash alike: %+v %+v", ia, ib)
	}
	// A change in the last MiB only changes Tail.
	data, _ := os.ReadFile(a)
	data[len(data)-5] ^= 1
	os.WriteFile(b, data, 0o644)
	ic, err := Identify(b)
	if err != nil {
		t.Fatal(err)
	}
	if ic.Head != ia.Head || ic.Tail == ia.Tail {
		t.Errorf("a change near the end: %+v, was %+v", ic, ia)
	}
	if _, err := Identify(filepath.Join(dir, "none")); err == nil {
		t.Error("Identify of a missing file returned no error")
	}
	// A pipe is refused by name, without reading from it.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Identify(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Identify of a pipe: %v", err)
	}
}
