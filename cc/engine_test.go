package cc

import (
	"bytes"
	"context"
	"testing"

	"sketchcc/ingest"
	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// testConfig is the pipeline and query room settings a test runs with.
type testConfig struct {
	Vertices     uint32
	SketchFactor float64
	BatchFactor  float64
	Seed         uint64
	Workers      int
	QueueBatches int
	NoGreedy     bool
	Readers      int
	// ApplyPieces makes every query that reuses the last answer sketch
	// the re-opened pieces' buffered ids into the store, however few.
	ApplyPieces bool
	// FromStart keeps the greedy shortcut from the first update, as Run
	// does with more than one query.
	FromStart bool
	// Wrapped hides the stream's *stream.Cursor behind a plain Source, so
	// that the greedy DSU follows on the reading goroutine rather than
	// reading the file on its own.
	Wrapped bool
	// Sets is the number of sketch sets (ingest.Config.Sets).
	Sets int
}

// engine is a query room over an in-process ingest.Engine, as main-node
// runs it.
type engine struct {
	*Room
	pipe *ingest.Engine
}

func newEngine(cfg testConfig) (engine, error) {
	pipe, err := ingest.New(ingest.Config{Vertices: cfg.Vertices, SketchFactor: cfg.SketchFactor,
		BatchFactor: cfg.BatchFactor, Seed: cfg.Seed, Workers: cfg.Workers, QueueBatches: cfg.QueueBatches,
		Readers: max(1, cfg.Readers), Sets: cfg.Sets})
	if err != nil {
		return engine{}, err
	}
	room := New(pipe, Config{NoGreedy: cfg.NoGreedy})
	if cfg.ApplyPieces {
		room.applyAt = 0
	}
	return engine{Room: room, pipe: pipe}, nil
}

// Close closes the pipeline.
func (e engine) Close() error { return e.pipe.Close() }

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
		e, err := newEngine(testConfig{Vertices: h.Vertices, Workers: workers})
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

// BenchmarkQuery measures a connected-components query (flush of a nearly
// empty pipeline plus Boruvka) after a random stream.
func BenchmarkQuery(b *testing.B) {
	const lg, n = 13, 400_000
	data := testgraph.RandomStream(b, 1<<lg, n)
	// NoGreedy: every query flushes and runs Boruvka; with the greedy
	// shortcut the repeated queries would be answered from the DSU.
	e, err := newEngine(testConfig{Vertices: 1 << lg, NoGreedy: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	r, _ := stream.NewReader(bytes.NewReader(data))
	if _, err := e.Ingest(context.Background(), r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Query(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
