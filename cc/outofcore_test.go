package cc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"sketchcc/ingest"
	"sketchcc/internal/testgraph"
	"sketchcc/offline/streamgen"
	"sketchcc/sketch"
	"sketchcc/store"
	"sketchcc/stream"
)

// outOfCoreEngine returns a Room over an Engine for the stream at path
// whose sketches live on disk under a memory limit of the runtime reserve
// plus a third of their bytes, and the stream's cursor; both are closed
// when the test ends.
func outOfCoreEngine(t *testing.T, path string, noGreedy bool) (*Room, *ingest.Engine, stream.Source) {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	h := f.Header()
	cfg := ingest.Config{Vertices: h.Vertices, Workers: 2, Readers: 1}
	m, err := ingest.PlanMemory(cfg, h.Updates)
	if err != nil {
		t.Fatal(err)
	}
	limit := int64(32<<20) + m.SketchSlab/3
	cfg, plan, err := ingest.PlanBudget(cfg, h.Updates, limit, t.TempDir(), path)
	if err != nil {
		t.Fatal(err)
	}
	if b := plan.Budget; !b.OutOfCore || b.Ranges < 2 {
		t.Fatalf("plan under %d bytes: %+v, want the sketches on disk in ranges", limit, b)
	}
	e, err := ingest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return New(e, Config{NoGreedy: noGreedy}), e, f.Cursor()
}

// TestOutOfCoreExact: with the sketches on disk, every query mid-stream
// and at the end equals a union-find over the edges of that prefix, with
// and without the greedy shortcut, and the sketches equal, byte for byte,
// those of an in-memory run of the same stream.
func TestOutOfCoreExact(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gens := map[string]func(out, cum *os.File) (streamgen.Summary, error){
		"kron10": func(out, cum *os.File) (streamgen.Summary, error) {
			return streamgen.Kron(ctx, streamgen.DefaultKronConfig(10, 3), out, cum)
		},
		"erdos-3000": func(out, cum *os.File) (streamgen.Summary, error) {
			return streamgen.Erdos(ctx, streamgen.DefaultErdosConfig(3000, 0.002, 5), out, cum)
		},
	}
	for name, gen := range gens {
		path := filepath.Join(dir, name+".bin")
		if sum := writeGenerated(t, path, gen); sum.Deletes == 0 {
			t.Fatalf("%s has no deletions", name)
		}
		h := mustHeader(t, path)
		for _, noGreedy := range []bool{false, true} {
			room, e, src := outOfCoreEngine(t, path, noGreedy)
			if !noGreedy {
				room.greedyFromStart()
			}
			var done uint64
			for _, pos := range []uint64{h.Updates / 7, h.Updates / 2, h.Updates * 5 / 6, h.Updates} {
				if _, err := room.IngestN(ctx, src, pos-done); err != nil {
					t.Fatal(err)
				}
				done = pos
				res, err := room.Query(ctx)
				if err != nil {
					t.Fatalf("%s after %d: %v", name, pos, err)
				}
				labels, truth := truthLabels(t, path, pos)
				checkAgainstTruth(t, fmt.Sprintf("%s out of core after %d (no greedy %v)", name, pos, noGreedy), res, labels, truth)
			}
			sameAsInMemory(t, path, e)
			if st, ok := e.Store().OutOfCore(); !ok || st.Swaps == 0 || st.ReadBytes == 0 || st.ColumnPasses == 0 {
				t.Fatalf("%s: disk stats %+v: want swaps, reads and column passes", name, st)
			}
		}
	}
}

// sameAsInMemory flushes e and compares its sketches, column by column,
// with those of an in-memory engine over the whole stream at path.
func sameAsInMemory(t *testing.T, path string, e *ingest.Engine) {
	t.Helper()
	ctx := context.Background()
	mem, src := openEngine(t, path, testConfig{Workers: 2})
	if _, err := mem.pipe.IngestN(ctx, src, ^uint64(0)); err != nil {
		t.Fatal(err)
	}
	if err := mem.pipe.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	stores := [2]*store.Store{mem.pipe.Store(), e.Store()}
	testgraph.SameSketches(t, path+": memory against disk", e.Params(), func(side, c int) (*sketch.Columns, error) {
		return stores[side].Columns(c)
	})
}
