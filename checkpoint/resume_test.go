package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// TestClaim: Claim locks the directory and removes a stale temporary; a
// second Claim is refused with ErrLocked.
func TestClaim(t *testing.T) {
	dir := t.TempDir()
	tmp, err := os.CreateTemp(dir, FileName+".tmp*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	var logged bytes.Buffer
	l, removed, err := Claim(dir, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil || len(removed) != 1 || removed[0] != tmp.Name() {
		t.Fatalf("Claim = %v, %q; want %s removed", err, removed, tmp.Name())
	}
	if !strings.Contains(logged.String(), tmp.Name()) {
		t.Errorf("Claim logged %q, not the temporary it removed", logged.String())
	}
	defer l.Unlock()
	if _, _, err := Claim(dir, nil); !errors.Is(err, ErrLocked) || !strings.HasSuffix(err.Error(), "; give each main node a directory of its own") {
		t.Errorf("second Claim: %v, want ErrLocked", err)
	}
}

// testStream writes a binary stream of n updates on 64 vertices and opens
// it.
func testStream(t *testing.T, n int) (*stream.File, StreamID) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.bin")
	testgraph.WriteRandomStream(t, path, 64, n, 7, true)
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	id, err := Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	return f, id
}

// TestTakeThenCheckPrefix: a checkpoint taken after 300 updates checks
// against its stream and moves a fresh Cursor there; a wrong digest, a
// nil cursor and a done context are refused. Take refuses a cursor whose
// digest does not cover the updates.
func TestTakeThenCheckPrefix(t *testing.T) {
	f, id := testStream(t, 1000)
	dir := t.TempDir()
	cur := f.Cursor()
	buf := make([]stream.Update, 300)
	if n, err := cur.Read(buf); n != 300 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	tk := &Taker{Dir: dir, Stream: id, Cursor: cur, Table: testTable(t), BatchFactor: 0.5}
	if err := tk.Take(299, false, nil); err == nil || !strings.Contains(err.Error(), "the sketches hold 299 updates") {
		t.Errorf("Take at 299 of 300 read: %v", err)
	}
	forest := []stream.Edge{{Src: 1, Dst: 2}}
	if err := tk.Take(300, true, forest); err != nil || tk.Bytes == 0 || tk.Writing <= 0 {
		t.Fatalf("Take: %v, %d bytes in %v", err, tk.Bytes, tk.Writing)
	}
	m, _, err := Read(dir)
	if err != nil || m.Updates != 300 || !m.GreedyValid || len(m.Forest) != 1 || m.BatchFactor != 0.5 {
		t.Fatalf("Read: %+v, %v", m, err)
	}
	fresh := f.Cursor()
	var got uint64
	if err := CheckPrefix(context.Background(), dir, "s.bin", fresh, m, func(r uint64) { got = r }); err != nil {
		t.Fatal(err)
	}
	if d, ok := fresh.Digest(); !ok || d != m.Prefix || fresh.Pos() != 300 || got != 300 {
		t.Errorf("after CheckPrefix: at %d, digest %v %v, progress %d; want 300, %v", fresh.Pos(), d, ok, got, m.Prefix)
	}
	bad := m
	bad.Prefix.CRC++
	if err := CheckPrefix(context.Background(), dir, "s.bin", f.Cursor(), bad, nil); err == nil ||
		!strings.Contains(err.Error(), "stream s.bin differs from the one checkpoint "+Path(dir)+" was taken on") {
		t.Errorf("edited stream: %v", err)
	}
	if err := CheckPrefix(context.Background(), dir, "s.txt", nil, m, nil); err == nil ||
		!strings.Contains(err.Error(), "the stream s.txt is not a binary stream file") {
		t.Errorf("no cursor: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := CheckPrefix(ctx, dir, "s.bin", f.Cursor(), m, nil); err == nil ||
		!strings.Contains(err.Error(), "interrupted after checking 0 updates of 300") {
		t.Errorf("interrupted: %v", err)
	}
}

// TestReadResume: a checkpoint reads back for its own stream, with or
// without the parameters it was taken with; another seed is refused
// naming the checkpoint and the stream, and a missing one with Read's
// error.
func TestReadResume(t *testing.T) {
	f, id := testStream(t, 100)
	dir := t.TempDir()
	cur := f.Cursor()
	buf := make([]stream.Update, 40)
	if n, err := cur.Read(buf); n != 40 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	var log bytes.Buffer
	tk := &Taker{Dir: dir, Stream: id, Cursor: cur, Table: testTable(t), BatchFactor: 0.5,
		Logger: slog.New(slog.NewTextHandler(&log, nil))}
	if err := tk.Take(40, false, nil); err != nil {
		t.Fatal(err)
	}
	if want := "msg=checkpoint updates=40 bytes=" + strconv.FormatInt(tk.Bytes, 10); !strings.Contains(log.String(), want) {
		t.Errorf("Take logged %q, want %q in it", log.String(), want)
	}
	for _, want := range []Params{{Stream: id}, {Stream: id, Seed: 42, SketchFactor: 1.5}} {
		r, err := ReadResume(dir, "s.bin", want, true)
		if err != nil || r.Meta.Updates != 40 || r.Meta.BatchFactor != 0.5 || r.Table.Params().Seed() != 42 ||
			r.Table.Params().Factor() != 1.5 {
			t.Errorf("ReadResume(%+v) = %+v, %v", want, r, err)
		}
	}
	_, err := ReadResume(dir, "s.bin", Params{Stream: id, Seed: 43}, true)
	if !errors.Is(err, ErrMismatch) || !strings.HasPrefix(err.Error(), "checkpoint "+Path(dir)+", stream s.bin: ") {
		t.Errorf("another seed: %v", err)
	}
	empty := t.TempDir()
	_, err = ReadResume(empty, "s.bin", Params{Stream: id}, false)
	if _, _, rerr := Read(empty); err == nil || err.Error() != rerr.Error() {
		t.Errorf("no checkpoint: %v, want Read's %v", err, rerr)
	}
}

// TestIdentifyPacked: a packed copy of a stream has its binary file's
// StreamID, for a stream shorter than the 1 MiB each end hashes and for
// one longer than two.
func TestIdentifyPacked(t *testing.T) {
	for _, n := range []int{1000, 300_000} {
		dir := t.TempDir()
		bin := filepath.Join(dir, "s.bin")
		testgraph.WriteRandomStream(t, bin, 5000, n, 7, false)
		packed := testgraph.PackCopy(t, bin, dir)
		want, err := Identify(bin)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Identify(packed); err != nil || got != want {
			t.Fatalf("%d updates: the packed copy's StreamID is %+v, %v; the binary file's %+v", n, got, err, want)
		}
	}
}

// streamAt40 returns the id of a 100-update test stream and a Cursor of it
// that has read its first 40 updates.
func streamAt40(t *testing.T) (StreamID, *stream.Cursor) {
	t.Helper()
	f, id := testStream(t, 100)
	cur := f.Cursor()
	if n, err := cur.Read(make([]stream.Update, 40)); n != 40 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	return id, cur
}

// TestResumeLoad: ReadResume not in memory checks a checkpoint (taken
// with the page cache kept small) without keeping its table, and Load
// hands exactly the table's buckets to the store; a fill that stops
// early, or a table changed after the check, fails Load naming the file,
// and ReadResume refuses the changed file.
func TestResumeLoad(t *testing.T) {
	id, cur := streamAt40(t)
	dir := t.TempDir()
	tb := testTable(t)
	tk := &Taker{Dir: dir, Stream: id, Cursor: cur, Table: tb, BatchFactor: 0.5, Uncached: true}
	if err := tk.Take(40, true, []stream.Edge{{Src: 3, Dst: 4}}); err != nil {
		t.Fatal(err)
	}
	eager, err := ReadResume(dir, "s.bin", Params{Stream: id}, true)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadResume(dir, "s.bin", Params{Stream: id, Seed: 42}, false)
	if err != nil || r.Table != nil || r.Params.Seed() != 42 || r.Params.TableBytes() != tb.Params().TableBytes() || r.Meta.Updates != 40 || len(r.Meta.Forest) != 1 ||
		r.Meta.Forest[0] != eager.Meta.Forest[0] || r.Meta.Prefix != eager.Meta.Prefix {
		t.Fatalf("ReadResume not in memory = %+v, %v; in memory it gives %+v", r, err, eager.Meta)
	}
	want := tableBytes(t, tb)[sketch.TableHeaderBytes:]
	var got []byte
	if err := r.Load(func(body io.Reader) (err error) { got, err = io.ReadAll(body); return err }); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Load read %d bytes (%v), want the table's %d", len(got), err, len(want))
	}
	if err := r.Load(func(body io.Reader) error { _, err := io.ReadFull(body, make([]byte, 100)); return err }); err == nil ||
		!strings.Contains(err.Error(), Path(dir)) || !strings.Contains(err.Error(), "left unread") {
		t.Errorf("Load with a fill that stops early: %v", err)
	}
	if err := eager.Load(func(io.Reader) error { return errors.New("called") }); err != nil {
		t.Errorf("Load of a Resume that holds its table: %v, want nothing done", err)
	}

	// One bit of the table flipped after the check.
	data, err := os.ReadFile(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-100] ^= 1
	if err := os.WriteFile(Path(dir), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Load(func(body io.Reader) error { _, err := io.Copy(io.Discard, body); return err }); !errors.Is(err, ErrCorrupt) ||
		!strings.Contains(err.Error(), Path(dir)) {
		t.Errorf("Load of a table changed since the check: %v, want ErrCorrupt naming the file", err)
	}
	if _, err := ReadResume(dir, "s.bin", Params{Stream: id}, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ReadResume of a flipped bit: %v, want ErrCorrupt", err)
	}
}

// shortTable writes a table's header and too few buckets.
type shortTable struct{ *sketch.Table }

func (s shortTable) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	if _, err := s.Table.WriteTo(&b); err != nil {
		return 0, err
	}
	n, err := w.Write(b.Bytes()[:b.Len()-16])
	return int64(n), err
}

// TestWriteShortSketches: sketches that write fewer bytes than their
// parameters' table are refused, and the old checkpoint stays.
func TestWriteShortSketches(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, testMeta(), testTable(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, testMeta(), shortTable{testTable(t)}); err == nil || !strings.Contains(err.Error(), "a table of their parameters") {
		t.Errorf("Write of short sketches: %v", err)
	}
	if _, _, err := Read(dir); err != nil {
		t.Errorf("the old checkpoint after a refused Write: %v", err)
	}
}

// TestResumeLoadReplaced: a checkpoint replaced, after ReadResume checked
// it, by another whole one of the same size (a later step) fails Load:
// the sketches would not be those of the Meta checked.
func TestResumeLoadReplaced(t *testing.T) {
	id, cur := streamAt40(t)
	dir := t.TempDir()
	tb := testTable(t)
	tk := &Taker{Dir: dir, Stream: id, Cursor: cur, Table: tb, BatchFactor: 0.5}
	if err := tk.Take(40, false, nil); err != nil {
		t.Fatal(err)
	}
	r, err := ReadResume(dir, "s.bin", Params{Stream: id}, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := cur.Read(make([]stream.Update, 10)); n != 10 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	tb.ApplyBatch(3, []uint32{9})
	if err := tk.Take(50, false, nil); err != nil {
		t.Fatal(err)
	}
	err = r.Load(func(body io.Reader) error { _, err := io.Copy(io.Discard, body); return err })
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "changed meanwhile") {
		t.Errorf("Load of a checkpoint replaced since the check: %v, want ErrCorrupt, changed meanwhile", err)
	}
}
