package ingest

import (
	"testing"
)

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
