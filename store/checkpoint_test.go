package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"sketchcc/sketch"
)

// writeBytes returns what s.WriteTo writes.
func writeBytes(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	n, err := s.WriteTo(&b)
	if err != nil || n != int64(b.Len()) {
		t.Fatalf("WriteTo: %d bytes (%d written), %v", n, b.Len(), err)
	}
	return b.Bytes()
}

// TestDiskWriteToMatchesMemory: a disk-backed store with batches spilled
// in most ranges writes, byte for byte, what an in-memory store given the
// same batches writes (sketch.Table.WriteTo's form, which sketch.ReadTable
// reads back), applies every spill doing so, and goes on matching it after
// more batches.
func TestDiskWriteToMatchesMemory(t *testing.T) {
	mem, dsk := diskPair(t)
	feed(t, mem, dsk, 1500, 3)
	if dsk.disk.n.spilled.Load() == 0 {
		t.Fatal("no batch spilled: the test shows nothing")
	}
	want := writeBytes(t, mem)
	got := writeBytes(t, dsk)
	if !bytes.Equal(got, want) {
		t.Fatalf("disk store wrote %d bytes differing from the in-memory store's %d", len(got), len(want))
	}
	if n := dsk.disk.n.spilled.Load(); n != 0 {
		t.Errorf("%d spilled bytes left after WriteTo, want none", n)
	}
	if _, err := sketch.ReadTable(bytes.NewReader(got)); err != nil {
		t.Errorf("ReadTable of the disk store's bytes: %v", err)
	}
	feed(t, mem, dsk, 700, 4)
	sameColumns(t, mem, dsk)
	if !bytes.Equal(writeBytes(t, dsk), writeBytes(t, mem)) {
		t.Error("after more batches, the disk store writes other bytes than the in-memory store")
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

var errFull = errors.New("disk full")

func (w *failWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, errFull
	}
	w.n -= len(b)
	return len(b), nil
}

// TestDiskWriteToWriterError: a writer that fails in the middle of the
// table fails WriteTo with its error, and leaves the store whole: Wait
// succeeds and the sketches still match the in-memory store's.
func TestDiskWriteToWriterError(t *testing.T) {
	mem, dsk := diskPair(t)
	feed(t, mem, dsk, 800, 5)
	if _, err := dsk.WriteTo(&failWriter{n: 100_000}); !errors.Is(err, errFull) {
		t.Fatalf("WriteTo into a failing writer: %v, want %v", err, errFull)
	}
	if err := dsk.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after a writer's error: %v", err)
	}
	sameColumns(t, mem, dsk)
}

// TestLoad: the body of a table written by one store, loaded into a
// fresh in-memory store and a fresh disk-backed one, gives both the
// original's sketches; both then take more batches as the original does.
// A short body and a store already in use are refused.
func TestLoad(t *testing.T) {
	mem, dsk := diskPair(t)
	feed(t, mem, dsk, 1200, 6)
	table := writeBytes(t, mem)
	body := table[sketch.TableHeaderBytes:]

	mem2, dsk2 := diskPair(t)
	for _, s := range []*Store{mem2, dsk2} {
		if err := s.Load(bytes.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(writeBytes(t, s), table) {
			t.Fatalf("loaded store (out of core: %v) writes other bytes than the table it loaded", s.disk != nil)
		}
	}
	feed(t, mem, dsk2, 600, 7)
	sameColumns(t, mem, dsk2)

	mem3, dsk3 := diskPair(t)
	for _, s := range []*Store{mem3, dsk3} {
		err := s.Load(bytes.NewReader(body[:len(body)-100]))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("Load of a short body (out of core: %v): %v, want io.ErrUnexpectedEOF", s.disk != nil, err)
		}
	}
	if err := dsk.Load(bytes.NewReader(body)); err == nil {
		t.Error("Load into a store that has applied batches succeeded")
	}
}

// TestOpenDiskOverKilledRun: the files a run killed before its Close left
// in the directory (more ranges than the new store's) are truncated or
// removed, and the new store's Close leaves the directory empty.
func TestOpenDiskOverKilledRun(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"sketches", "spill-00000", "spill-00005", "spill-00042"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("left by a killed run"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p, err := sketch.NewParams(300, 1, 11)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenDisk(p, DiskConfig{Dir: dir, ResidentBytes: p.TableBytes()})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := s.OutOfCore(); st.Layout.Ranges != 1 {
		t.Fatalf("%d ranges, want 1", st.Layout.Ranges)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("%d files left after Close (%v), want none", len(left), err)
	}
}
