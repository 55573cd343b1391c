package ingest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"testing"

	"sketchcc/gutters"
	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// TestSketchMemoryMatchesDesign: the engine's sketch memory is exactly
// DESIGN.md §2's 13,072 bytes per vertex at V = 2^17 (R = 34, S = 24), in
// one slab, and its gutters hold DESIGN.md §3's sketch bytes / 4 ids at
// batch factor 1; untouched vertices cost no resident memory, so this is
// cheap.
func TestSketchMemoryMatchesDesign(t *testing.T) {
	e, err := New(Config{Vertices: 1 << 17, Workers: 1, BatchFactor: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := e.Params().BytesPerVertex(); got != 13072 {
		t.Errorf("bytes per vertex = %d, want 13072", got)
	}
	if got := e.SketchBytes(); got != 13072<<17 {
		t.Errorf("sketch bytes = %d, want %d", got, 13072<<17)
	}
	if got := e.BatchUpdates(); got != 13072/4 {
		t.Errorf("gutter holds %d ids, want sketch bytes / 4 = %d", got, 13072/4)
	}
}

// TestFlushInterrupted: a flush whose context is done returns its cause
// without sketching the gutters it has not reached (an interrupted query
// must not wait for every gutter), and keeps their updates: a later flush
// gives the sketches of an uninterrupted one.
func TestFlushInterrupted(t *testing.T) {
	const vertices = 2048
	raw := testgraph.RandomStream(t, vertices, 20_000)
	sketches := func(cancelFirst bool) []byte {
		t.Helper()
		e, r := engineOver(t, Config{Vertices: vertices, Workers: 1}, raw)
		if _, err := e.IngestN(context.Background(), r, math.MaxUint64); err != nil {
			t.Fatal(err)
		}
		if cancelFirst {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := e.Flush(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Flush with a cancelled context: %v", err)
			}
			if heldIDs(t, e) == 0 {
				t.Fatalf("the interrupted flush emptied every gutter")
			}
		}
		if err := e.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := e.Store().Table().WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if !bytes.Equal(sketches(true), sketches(false)) {
		t.Error("the sketches after an interrupted flush and a full one differ from those of one full flush")
	}
}

// heldIDs settles e and returns the number of neighbour ids its gutters
// still hold.
func heldIDs(t *testing.T, e *Engine) int {
	t.Helper()
	view, err := e.Settle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for v := range e.Config().Vertices {
		k, err := view.Len(v)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}

// TestSettleViewStaleAfterIngest: the view Settle returns reads the
// buffered ids until the next IngestN, and after it returns
// gutters.ErrStale rather than ids the gutters no longer hold.
func TestSettleViewStaleAfterIngest(t *testing.T) {
	const vertices = 300
	e, r := engineOver(t, Config{Vertices: vertices, Workers: 1}, testgraph.RandomStream(t, vertices, 2_000))
	if k, err := e.IngestN(context.Background(), r, 1_000); err != nil || k != 1_000 {
		t.Fatalf("IngestN = %d, %v", k, err)
	}
	view, err := e.Settle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var buf []uint32
	if _, err := view.Held(0, &buf); err != nil {
		t.Fatalf("Held right after Settle: %v", err)
	}
	if k, err := e.IngestN(context.Background(), r, 1); err != nil || k != 1 {
		t.Fatalf("IngestN = %d, %v", k, err)
	}
	if ids, err := view.Held(0, &buf); !errors.Is(err, gutters.ErrStale) || ids != nil {
		t.Errorf("Held after IngestN = %v, %v; want gutters.ErrStale", ids, err)
	}
}

// engineOver returns a new Engine for cfg, closed when the test ends, and
// a reader of the binary stream raw.
func engineOver(t *testing.T, cfg Config, raw []byte) (*Engine, *stream.Reader) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	r, err := stream.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return e, r
}
