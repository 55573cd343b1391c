package cc

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"sketchcc/dsu"
	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// readerCounts are the reader counts TestGreedyOffAfterBadRecord runs
// with: the DSU follows on the reading goroutine (one reader) or beside
// the readers. The pipeline's own parallel-reader contract is tested in
// package ingest.
var readerCounts = []int{1, 2, 4}

// TestGreedyOffAfterBadRecord: when the pipeline stops at a bad record,
// the greedy DSU (fed beside the readers, or on the reading goroutine) is
// turned off, and the next query, a full one, is exact for the updates
// read before the bad record.
func TestGreedyOffAfterBadRecord(t *testing.T) {
	const n, updates, bad = 120, 20_000, 12_345
	path := filepath.Join(t.TempDir(), "bad.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 5, false)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The truth is that of the stream's good prefix.
	prefix := filepath.Join(t.TempDir(), "good.bin")
	if err := os.WriteFile(prefix, good[:stream.RecordOffset(bad)], 0o644); err != nil {
		t.Fatal(err)
	}
	writeHeader(t, prefix, stream.Header{Vertices: n, Updates: bad})
	labels, want := truthLabels(t, prefix, bad)
	off := stream.RecordOffset(bad)
	for _, spoil := range []struct {
		name string
		f    func(rec []byte)
	}{
		{"type byte", func(rec []byte) { rec[0] = 7 }},
		{"self-loop", func(rec []byte) { copy(rec[5:9], rec[1:5]) }},
		{"vertex out of range", func(rec []byte) { binary.LittleEndian.PutUint32(rec[5:9], n) }},
	} {
		writeSpoiled(t, path, good, off, spoil.f)
		for _, r := range readerCounts {
			for _, wrapped := range []bool{false, true} {
				cfg := testConfig{Readers: r, BatchFactor: 0.1, FromStart: true, Wrapped: wrapped}
				name := fmt.Sprintf("%s, %+v", spoil.name, cfg)
				e, src := openEngine(t, path, cfg)
				e.greedyFromStart()
				if wrapped {
					src = plainSource{src}
				}
				k, err := e.IngestN(context.Background(), src, 5_000)
				if err != nil || k != 5_000 {
					t.Fatalf("%s: IngestN = %d, %v", name, k, err)
				}
				if _, err := e.Query(context.Background()); err != nil {
					t.Fatal(err)
				}
				k, err = e.IngestN(context.Background(), src, updates)
				if err == nil || k != bad-5_000 {
					t.Fatalf("%s: IngestN past the bad record = %d, %v; want %d and an error", name, k, err, bad-5_000)
				}
				if e.greedy.valid {
					t.Errorf("%s: the greedy shortcut is still on after a failed read", name)
				}
				res, err := e.Query(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				checkAgainstTruth(t, "after the bad record, "+name, res, labels, want)
			}
		}
	}
}

// TestGreedyFollowStopsAtBadRecord: the goroutine beside the readers
// applies exactly the records before a bad one, whatever the check it
// fails, and no further.
func TestGreedyFollowStopsAtBadRecord(t *testing.T) {
	const n, updates, bad = 50, 3_000, 1_234
	path := filepath.Join(t.TempDir(), "bad.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 8, false)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := stream.RecordOffset(bad)
	for _, spoil := range []func(rec []byte){
		func(rec []byte) { rec[0] = 2 },
		func(rec []byte) { copy(rec[1:5], rec[5:9]) },
		func(rec []byte) { binary.LittleEndian.PutUint32(rec[1:5], n+7) },
	} {
		writeSpoiled(t, path, good, off, spoil)
		f, err := stream.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var r Room
		r.greedy.reset(dsu.New(n), nil)
		var stop atomic.Uint64
		stop.Store(updates)
		if got := r.follow(context.Background(), f, 100, &stop); got != bad-100 {
			t.Errorf("followed %d records from 100, want %d (up to the bad one)", got, bad-100)
		}
		// A lowered stop is obeyed.
		r.greedy.reset(dsu.New(n), nil)
		stop.Store(700)
		if got := r.follow(context.Background(), f, 100, &stop); got != 600 {
			t.Errorf("followed %d records of [100, 700)", got)
		}
		f.Close()
	}
}

// writeSpoiled writes to path the stream good with spoil applied to the
// record at byte offset off.
func writeSpoiled(t *testing.T, path string, good []byte, off int64, spoil func(rec []byte)) {
	t.Helper()
	data := append([]byte(nil), good...)
	spoil(data[off : off+stream.RecordBytes])
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeHeader overwrites the header of the binary stream at path.
func writeHeader(t *testing.T, path string, h stream.Header) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [stream.HeaderBytes]byte
	binary.LittleEndian.PutUint32(b[:4], h.Vertices)
	binary.LittleEndian.PutUint64(b[4:], h.Updates)
	if _, err := f.WriteAt(b[:], 0); err != nil {
		t.Fatal(err)
	}
}
