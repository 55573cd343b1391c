package checkpoint

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sketchcc/sketch"
)

// goodFile returns the bytes of testMeta's checkpoint.
func goodFile(t testing.TB) []byte {
	t.Helper()
	dir := t.TempDir()
	if _, err := Write(dir, testMeta(), testTable(t)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// header fields of a crafted checkpoint, at their offsets in the file.
type crafted struct {
	version, flags uint32
	updates        uint64
	factor         float64
	vertices       uint32
	streamUpdates  uint64
	edges          uint64
}

// craft returns the file of c's header followed by body, with a valid
// checksum: what someone who knows the format can write.
func craft(c crafted, body []byte) []byte {
	h := make([]byte, headerBytes)
	copy(h, magic)
	binary.LittleEndian.PutUint32(h[8:], c.version)
	binary.LittleEndian.PutUint32(h[12:], c.flags)
	binary.LittleEndian.PutUint64(h[16:], c.updates)
	binary.LittleEndian.PutUint64(h[24:], math.Float64bits(c.factor))
	binary.LittleEndian.PutUint32(h[32:], c.vertices)
	binary.LittleEndian.PutUint64(h[40:], c.streamUpdates)
	binary.LittleEndian.PutUint64(h[headerBytes-8:], c.edges)
	data := append(h, body...)
	return binary.LittleEndian.AppendUint32(data, crc32.Checksum(data, castagnoli))
}

// readResult is what Read returned for a file of bytes, and the bytes it
// allocated.
type readResult struct {
	meta  Meta
	table *sketch.Table
	err   error
	alloc uint64
	dir   string
}

// readBytes writes data as the checkpoint of a new directory and reads it
// back.
func readBytes(t testing.TB, data []byte) readResult {
	t.Helper()
	r := readResult{dir: t.TempDir()}
	if err := os.WriteFile(Path(r.dir), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r.meta, r.table, r.err = Read(r.dir)
	runtime.ReadMemStats(&after)
	r.alloc = after.TotalAlloc - before.TotalAlloc
	return r
}

// allocBound is what Read may allocate for a file of size bytes: its
// table (at most the file) and forest (likewise), the 1 MiB read buffer
// and small change.
func allocBound(size int) uint64 { return 2*uint64(size) + 2<<20 }

// TestCraftedCounts: a header with a valid checksum whose counts the file
// cannot hold (issue 29: 2^32−1 vertices and a forest of 2^32−2 edges in
// a 136-byte file made --resume die of out of memory) is refused as
// corrupt, naming the count, before anything of that size is allocated.
func TestCraftedCounts(t *testing.T) {
	f := func(name, want string, c crafted, body []byte) {
		t.Helper()
		data := craft(c, body)
		r := readBytes(t, data)
		if !errors.Is(r.err, ErrCorrupt) || !strings.Contains(r.err.Error(), want) {
			t.Errorf("%s: %v; want ErrCorrupt saying %q", name, r.err, want)
		}
		if r.alloc > allocBound(len(data)) {
			t.Errorf("%s: Read allocated %d bytes for a file of %d", name, r.alloc, len(data))
		}
	}
	huge := crafted{version: Version, flags: flagGreedy, updates: 1, factor: 1, vertices: math.MaxUint32,
		streamUpdates: 2, edges: math.MaxUint32 - 1}
	f("issue 29's header", "forest of 4294967294 edges in a file of", huge, make([]byte, 136-headerBytes-4))
	huge.edges = 1 << 20
	f("a forest a little too long", "forest of 1048576 edges", huge, make([]byte, 8<<20-1))
	// The table's own counts: a table header of 2^32−1 vertices after a
	// forest that fits.
	huge.edges = 0
	th := make([]byte, tableHeaderBytes)
	copy(th, tableBytes(t, testTable(t))[:8])
	binary.LittleEndian.PutUint32(th[8:], math.MaxUint32)
	binary.LittleEndian.PutUint64(th[24:], math.Float64bits(1))
	f("a table of 2^32−1 vertices", "truncated or padded", huge, th)
}

// TestVersion1Refused: a checkpoint an older build wrote, which names its
// stream only by size and ends, is refused with ErrVersion, saying so.
func TestVersion1Refused(t *testing.T) {
	data := goodFile(t)
	binary.LittleEndian.PutUint32(data[8:], 1)
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
	err := readBytes(t, data).err
	if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "older build") ||
		!strings.Contains(err.Error(), "cannot be resumed safely") {
		t.Errorf("version 1: %v; want ErrVersion, an older build, cannot be resumed safely", err)
	}
}

// FuzzRead reads checkpoints whose header fields are crafted and whose
// checksum is valid, so that the checks behind the checksum are reached:
// Read must never panic, return a table only for a file that is whole,
// and never allocate more than the file's size makes room for.
func FuzzRead(f *testing.F) {
	good := goodFile(f)
	body := good[headerBytes : len(good)-4]
	m := testMeta()
	f.Add(uint32(Version), uint32(flagGreedy), m.Updates, m.BatchFactor, m.Stream.Vertices, m.Stream.Updates,
		uint64(len(m.Forest)), body)
	f.Add(uint32(Version), uint32(flagGreedy), uint64(1), 1.0, uint32(math.MaxUint32), uint64(2),
		uint64(math.MaxUint32-1), body[:120])
	f.Add(uint32(Version), uint32(0), uint64(0), 64.0, uint32(64), uint64(0), uint64(0), body[24:])
	f.Add(uint32(1), uint32(0), uint64(0), 1.0, uint32(64), uint64(0), uint64(0), body)
	f.Fuzz(func(t *testing.T, version, flags uint32, updates uint64, factor float64, vertices uint32,
		streamUpdates, edges uint64, body []byte) {
		c := crafted{version: version, flags: flags, updates: updates, factor: factor, vertices: vertices,
			streamUpdates: streamUpdates, edges: edges}
		data := craft(c, body)
		r := readBytes(t, data)
		if r.alloc > allocBound(len(data)) {
			t.Fatalf("Read allocated %d bytes for a file of %d", r.alloc, len(data))
		}
		if r.err != nil {
			if r.table != nil || !strings.Contains(r.err.Error(), Path(r.dir)) {
				t.Fatalf("refused with a table (%v) or without naming the file: %v", r.table != nil, r.err)
			}
			return
		}
		got, tb := r.meta, r.table
		if got.Updates > got.Stream.Updates || got.Prefix.Records != got.Updates ||
			uint64(len(got.Forest)) >= uint64(tb.Params().Vertices()) {
			t.Fatalf("accepted an impossible checkpoint: %+v", got)
		}
	})
}

// TestReadPipe: a pipe in place of the checkpoint (issue 29: --resume
// blocked forever on it, deaf to SIGTERM) is refused at once as not a
// regular file, without waiting for a writer.
func TestReadPipe(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(Path(dir), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := Read(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), Path(dir)) {
			t.Errorf("Read of a pipe: %v; want a refusal naming the file, not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		// Open the pipe's other end, so that the blocked Read returns.
		if w, err := os.OpenFile(Path(dir), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("Read of a pipe still blocked after 10 s")
	}
}

// TestLockDir: a second LockDir of a held directory fails at once with
// ErrLocked, naming the holder's pid and host; after Unlock it succeeds.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	_, err = LockDir(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())+" host "+host) ||
		!strings.Contains(err.Error(), dir) {
		t.Fatalf("second LockDir: %v; want ErrLocked naming the directory, pid %d and host %s", err, os.Getpid(), host)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	l2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after Unlock: %v", err)
	}
	l2.Unlock()
}

// TestRemoveTemps: the temporaries Write leaves when it is killed go, and
// nothing else does: not the checkpoint, the lock, a directory or a file
// whose name only looks alike.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, testMeta(), testTable(t)); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.CreateTemp(dir, FileName+".tmp*") // as Write names them
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	keep := []string{FileName, LockFileName, FileName + ".tmp", FileName + ".tmp12x", FileName + ".tmp-1", "notes.tmp123"}
	for _, n := range keep[1:] {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, FileName+".tmp77"), 0o755); err != nil {
		t.Fatal(err)
	}
	keep = append(keep, FileName+".tmp77")
	removed, err := RemoveTemps(dir)
	if err != nil || len(removed) != 1 || removed[0] != tmp.Name() {
		t.Fatalf("RemoveTemps = %q, %v; want [%s]", removed, err, tmp.Name())
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed: %v", n, err)
		}
	}
	if _, err := os.Stat(tmp.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there: %v", tmp.Name(), err)
	}
}
