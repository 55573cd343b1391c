package ingest

import (
	"context"
	"testing"

	"sketchcc/stream"
)

func TestMultiplesStream(t *testing.T) {
	const path = "../testdata/multiples_graph_1024_stream.data"
	h := mustHeader(t, path)
	_, want := truthLabels(t, path, h.Updates)
	if want != 78 { // DESIGN.md §6 and the data README: 78 components
		t.Fatalf("ground truth replay gives %d components, the data README says 78", want)
	}
	for _, workers := range []int{1, 3} {
		f, err := stream.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(Config{Vertices: h.Vertices, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		n, err := e.Ingest(context.Background(), f.Reader(0, h.Updates))
		if err != nil || n != h.Updates {
			t.Fatalf("ingest: %d updates, %v", n, err)
		}
		res, err := e.Query(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Components != want {
			t.Errorf("workers=%d: %d components, want %d", workers, res.Components, want)
		}
		if len(res.Forest.Edges) != int(h.Vertices)-want {
			t.Errorf("forest has %d edges, want %d", len(res.Forest.Edges), int(h.Vertices)-want)
		}
		e.Close()
		f.Close()
	}
}

// TestSketchMemoryMatchesDesign: the engine's sketch memory is exactly
// DESIGN.md §2's 13,072 bytes per vertex at V = 2^17 (R = 34, S = 24), in
// one slab; untouched vertices cost no resident memory, so this is cheap.
func TestSketchMemoryMatchesDesign(t *testing.T) {
	e, err := New(Config{Vertices: 1 << 17, Workers: 1})
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
