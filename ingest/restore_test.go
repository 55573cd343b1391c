package ingest

import (
	"bytes"
	"context"
	"io"
	"math"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/sketch"
	"sketchcc/store"
	"sketchcc/stream"
)

// tableOf flushes e and returns what its store writes (the table's form).
func tableOf(t *testing.T, e *Engine) []byte {
	t.Helper()
	if err := e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := e.Store().WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRestore: an engine restored (Config.Restore) from the sketches of
// a stream's first 8,000 updates, on disk in four ranges or in memory,
// and fed the rest, ends with the sketches of one engine fed all of it.
// A Restore that fails fails New.
func TestRestore(t *testing.T) {
	const vertices, n, at = 2048, 20_000, 8000
	raw := testgraph.RandomStream(t, vertices, n)
	ref, r := engineOver(t, Config{Vertices: vertices, Workers: 1}, raw)
	if _, err := ref.IngestN(context.Background(), r, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	want := tableOf(t, ref)
	first, r := engineOver(t, Config{Vertices: vertices, Workers: 1}, raw)
	if _, err := first.IngestN(context.Background(), r, at); err != nil {
		t.Fatal(err)
	}
	body := tableOf(t, first)[sketch.TableHeaderBytes:]
	restore := func(fill func(io.Reader) error) error { return fill(bytes.NewReader(body)) }

	p := ref.Params()
	for _, disk := range []*store.DiskConfig{nil, {Dir: t.TempDir(), ResidentBytes: p.TableBytes() / 4}} {
		e, r := engineOver(t, Config{Vertices: vertices, Workers: 2, Disk: disk, Restore: restore}, raw)
		if _, err := r.Read(make([]stream.Update, at)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.IngestN(context.Background(), r, math.MaxUint64); err != nil {
			t.Fatal(err)
		}
		st, ooc := e.Store().OutOfCore()
		if disk != nil && (!ooc || st.Layout.Ranges != 4) {
			t.Fatalf("out of core: %v, %d ranges; want 4", ooc, st.Layout.Ranges)
		}
		if !bytes.Equal(tableOf(t, e), want) {
			t.Errorf("restored after %d updates (out of core: %v) and fed the rest: sketches differ from one run's", at, ooc)
		}
	}
	bad := func(fill func(io.Reader) error) error { return fill(bytes.NewReader(body[:100])) }
	if _, err := New(Config{Vertices: vertices, Workers: 1, Restore: bad}); err == nil {
		t.Error("New with a Restore that fails succeeded")
	}
}
