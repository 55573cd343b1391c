package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sketchcc/internal/testgraph"
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
		r, err := ReadResume(dir, "s.bin", want)
		if err != nil || r.Meta.Updates != 40 || r.Meta.BatchFactor != 0.5 || r.Table.Params().Seed() != 42 ||
			r.Table.Params().Factor() != 1.5 {
			t.Errorf("ReadResume(%+v) = %+v, %v", want, r, err)
		}
	}
	_, err := ReadResume(dir, "s.bin", Params{Stream: id, Seed: 43})
	if !errors.Is(err, ErrMismatch) || !strings.HasPrefix(err.Error(), "checkpoint "+Path(dir)+", stream s.bin: ") {
		t.Errorf("another seed: %v", err)
	}
	empty := t.TempDir()
	_, err = ReadResume(empty, "s.bin", Params{Stream: id})
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
