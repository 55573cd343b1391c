package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/offline/streamgen"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// The parallel-reader contract of IngestN: whatever the number of readers,
// after IngestN has returned k updates the sketches plus the gutters hold
// exactly the first k records of the stream. The tests below check it bit
// for bit: the table after a Flush (or after a Settle, with the view's
// buffered ids sketched in) must equal the reference table, every record
// sketched directly into it with no gutter, no batch and no reader
// (sketches are linear, so that is the sketch of the toggled edge set),
// for one reader (the sequential path), two, and several.

// readerCounts are the reader counts every test below runs with.
var readerCounts = []int{1, 2, 4}

// reference is the table of a stream's first records, sketched one record
// at a time on the test's goroutine.
type reference struct {
	f   *stream.File
	tab *sketch.Table
	at  uint64 // records sketched into tab
}

// newReference opens the binary stream at path, closed when the test ends,
// for a reference table with the sketch parameters an Engine of cfg uses.
func newReference(t *testing.T, path string, cfg Config) *reference {
	t.Helper()
	f := openStream(t, path)
	cfg.Vertices = f.Header().Vertices
	cfg.ensureDefaults()
	p, err := sketch.NewParams(cfg.Vertices, cfg.SketchFactor, cfg.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return &reference{f: f, tab: sketch.NewTable(p)}
}

// upTo sketches records [r.at, hi) into the reference table.
func (r *reference) upTo(t *testing.T, hi uint64) *sketch.Table {
	t.Helper()
	if hi < r.at {
		t.Fatalf("reference at %d, asked for %d", r.at, hi)
	}
	rd := r.f.Reader(r.at, hi)
	buf := make([]stream.Update, 4096)
	for {
		n, err := rd.Read(buf)
		for _, u := range buf[:n] {
			r.tab.ApplyBatch(u.Src, []uint32{u.Dst})
			r.tab.ApplyBatch(u.Dst, []uint32{u.Src})
		}
		r.at += uint64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if r.at != hi {
		t.Fatalf("reference read %d records, want %d", r.at, hi)
	}
	return r.tab
}

// engineOn returns an Engine of cfg for the binary stream at path and a
// Cursor at its start; both are closed when the test ends.
func engineOn(t *testing.T, path string, cfg Config) (*Engine, *stream.Cursor) {
	t.Helper()
	f := openStream(t, path)
	cfg.Vertices = f.Header().Vertices
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, f.Cursor()
}

// checkFlushed flushes e and fails t unless its table equals want bit for
// bit.
func checkFlushed(t *testing.T, name string, e *Engine, want *sketch.Table) {
	t.Helper()
	if err := e.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for v := range want.Params().Vertices() {
		if !slices.Equal(e.Store().Table().Sketch(v), want.Sketch(v)) {
			t.Fatalf("%s: the sketch of vertex %d differs from the reference", name, v)
		}
	}
	if n := heldIDs(t, e); n != 0 {
		t.Fatalf("%s: %d ids still buffered after Flush", name, n)
	}
}

// checkSettled settles e and fails t unless its table, with the ids the
// view holds sketched into a copy of each vertex's sketch, equals want bit
// for bit; the gutters keep their ids.
func checkSettled(t *testing.T, name string, e *Engine, want *sketch.Table) {
	t.Helper()
	view, err := e.Settle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := want.Params()
	var buf []uint32
	for v := range p.Vertices() {
		s := slices.Clone(e.Store().Table().Sketch(v))
		held, err := view.Held(v, &buf)
		if err != nil {
			t.Fatal(err)
		}
		p.ApplyBatch(s, v, held)
		if !slices.Equal(s, want.Sketch(v)) {
			t.Fatalf("%s: the sketch of vertex %d plus its %d buffered ids differs from the reference", name, v, len(held))
		}
	}
}

// ingestTo reads the stream at path with an Engine of cfg, stopping at
// each position of at (sorted, the last the end), and checks the tables
// there against the reference: after a Settle at odd positions, after a
// Flush at even ones and at the end. It runs as a subtest, whose end frees
// the engine and the reference.
func ingestTo(t *testing.T, path string, cfg Config, at []uint64) {
	t.Helper()
	t.Run(fmt.Sprintf("readers=%d", cfg.Readers), func(t *testing.T) { ingestAt(t, path, cfg, at) })
}

func ingestAt(t *testing.T, path string, cfg Config, at []uint64) {
	t.Helper()
	e, cur := engineOn(t, path, cfg)
	ref := newReference(t, path, cfg)
	var done uint64
	for i, pos := range at {
		k, err := e.IngestN(context.Background(), cur, pos-done)
		if err != nil || k != pos-done {
			t.Fatalf("%+v: IngestN(%d) from %d = %d, %v", cfg, pos-done, done, k, err)
		}
		done = pos
		name := fmt.Sprintf("%s %+v after %d updates", filepath.Base(path), cfg, pos)
		if i%2 == 1 && i < len(at)-1 {
			checkSettled(t, name, e, ref.upTo(t, pos))
		} else {
			checkFlushed(t, name, e, ref.upTo(t, pos))
		}
	}
}

// openStream opens the binary stream at path, closed when the test ends.
func openStream(t *testing.T, path string) *stream.File {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// end returns the update count of the binary stream at path, as the only
// position to stop at.
func end(t *testing.T, path string) []uint64 {
	t.Helper()
	return []uint64{openStream(t, path).Header().Updates}
}

// TestReadersRealGraphs: every real graph gives the reference table with
// 1, 2 and 4 readers, with small gutters (many batches in flight while the
// readers run) and with default ones.
func TestReadersRealGraphs(t *testing.T) {
	for _, file := range []string{"multiples_graph_1024_stream.data", "karate.bin", "lesmis.bin", "jazz.bin",
		"road-minnesota.bin", "email-Eu-core.bin", "p2p-Gnutella08.bin", "ca-GrQc.bin",
		"facebook_combined.bin", "as733.bin"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", file)
			for _, r := range readerCounts {
				for _, cfg := range []Config{{Readers: r, Workers: 2}, {Readers: r, Workers: 3, BatchFactor: 0.02, QueueBatches: 2}} {
					ingestTo(t, path, cfg, end(t, path))
				}
			}
		})
	}
}

// TestReadersGeneratedStreams: dynamic streams with deletions (Kronecker
// and Erdős–Rényi) give the reference table with 1, 2 and 4 readers, at
// the end and mid-stream.
func TestReadersGeneratedStreams(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// The generators' cumulative edge files are not needed: the
	// reference is the stream itself.
	gens := map[string]func(out io.Writer) (streamgen.Summary, error){
		"kron10": func(out io.Writer) (streamgen.Summary, error) {
			return streamgen.Kron(ctx, streamgen.DefaultKronConfig(10, 7), out, io.Discard)
		},
		"erdos-2000": func(out io.Writer) (streamgen.Summary, error) {
			return streamgen.Erdos(ctx, streamgen.DefaultErdosConfig(2000, 0.001, 3), out, io.Discard)
		},
		"erdos-300": func(out io.Writer) (streamgen.Summary, error) {
			return streamgen.Erdos(ctx, streamgen.DefaultErdosConfig(300, 0.3, 4), out, io.Discard)
		},
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".bin")
			out, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := gen(out)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil || sum.Deletes == 0 {
				t.Fatalf("generating: %v; %+v (deletes needed)", err, sum)
			}
			n := end(t, path)[0]
			for _, r := range readerCounts {
				ingestTo(t, path, Config{Readers: r, Workers: 2, BatchFactor: 0.1}, []uint64{n})
				ingestTo(t, path, Config{Readers: r, BatchFactor: 0.1}, []uint64{n / 7, n / 3, n / 2, n - 1, n})
			}
		})
	}
}

// TestReadersMidStreamQueries: at GraphZeppelin's multiple-query points,
// and every 50 updates of random toggles with lying type bytes, several
// readers give the reference table of each prefix, with small and tiny
// gutters.
func TestReadersMidStreamQueries(t *testing.T) {
	at := []uint64{852, 1704, 2556, 3408, 4260, 5112, 5964, 6816, 7668, 8528}
	const path = "../testdata/multiples_graph_1024_stream.data"
	p := filepath.Join(t.TempDir(), "toggles.bin")
	testgraph.WriteRandomStream(t, p, 60, 3000, 9, true)
	var at50 []uint64
	for q := uint64(50); q <= 3000; q += 50 {
		at50 = append(at50, q)
	}
	for _, r := range readerCounts[1:] {
		for _, cfg := range []Config{{Readers: r, BatchFactor: 0.2}, {Readers: r, BatchFactor: 0.01, QueueBatches: 2}} {
			ingestTo(t, path, cfg, at)
		}
		ingestTo(t, p, Config{Readers: r, BatchFactor: 0.05}, at50)
	}
}

// TestReadersStagedVertices: 70,000 vertices (the sequential path stages
// there) with 4 readers, checked mid-stream and at the end.
func TestReadersStagedVertices(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1.7 GB of sketches; runs in the full suite")
	}
	const n, updates = 70_000, 1_500_000
	path := filepath.Join(t.TempDir(), "staged.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 5, false)
	ingestTo(t, path, Config{Readers: 4, BatchFactor: 0.02}, []uint64{300_000, 1_200_000, updates})
}

// TestReadersFirstBadRecord: with several readers, a stream with bad
// records reports the first one in stream order, with its index and byte
// offset, whichever reader meets it first, and the count of updates
// before it. With one reader the sketches then hold exactly those
// updates; with several they may hold records past the bad one that
// other readers reached (IngestN says so), and are not compared.
func TestReadersFirstBadRecord(t *testing.T) {
	const n, updates = 100, 50_000
	path := filepath.Join(t.TempDir(), "bad.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 3, false)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A self-loop at 20,000 and a bad type byte at 40,000 and 45,000.
	for _, bad := range []struct {
		i    int64
		typ  byte
		self bool
	}{{40_000, 7, false}, {45_000, 9, false}, {20_000, 0, true}} {
		off := stream.RecordOffset(uint64(bad.i))
		if bad.self {
			copy(data[off+5:off+9], data[off+1:off+5])
		} else {
			data[off] = bad.typ
		}
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range readerCounts {
		cfg := Config{Readers: r, Workers: 1}
		e, cur := engineOn(t, path, cfg)
		k, err := e.IngestN(context.Background(), cur, updates)
		var fe *stream.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, stream.ErrSelfLoop) || fe.Index != 20_000 || fe.Offset != stream.RecordOffset(20_000) {
			t.Fatalf("readers=%d: %v, want a self-loop at update 20000", r, err)
		}
		if k != 20_000 {
			t.Fatalf("readers=%d: IngestN returned %d; want the 20000 before the bad record", r, k)
		}
		if r == 1 {
			checkFlushed(t, "one reader, stopped at the bad record", e, newReference(t, path, cfg).upTo(t, 20_000))
		}
	}
}

// TestReadersCancel: a cancelled context stops parallel readers with its
// cause, and the updates IngestN counts are exactly the first ones, in the
// sketches and behind the Cursor.
func TestReadersCancel(t *testing.T) {
	const path = "../testdata/facebook_combined.bin"
	for _, r := range readerCounts[1:] {
		cfg := Config{Readers: r}
		e, cur := engineOn(t, path, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		k, err := e.IngestN(ctx, cur, end(t, path)[0])
		if !errors.Is(err, context.Canceled) || cur.Pos() != k {
			t.Fatalf("readers=%d: IngestN = %d, %v, Cursor at %d; want context.Canceled and the Cursor at the count", r, k, err, cur.Pos())
		}
		checkFlushed(t, fmt.Sprintf("readers=%d, cancelled", r), e, newReference(t, path, cfg).upTo(t, k))
	}
}
