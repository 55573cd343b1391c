package cc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"sketchcc/dsu"
	"sketchcc/internal/testgraph"
	"sketchcc/offline/streamgen"
	"sketchcc/stream"
)

// readerCounts are the parallel reader counts every exactness test below
// runs with; one reader is the sequential path the other tests cover.
var readerCounts = []int{1, 2, 4}

// TestReadersRealGraphs: every real graph gives the union-find's answer
// with 1, 2 and 4 readers, with small gutters (many batches in flight
// while the readers run) and with default ones.
func TestReadersRealGraphs(t *testing.T) {
	for _, file := range []string{"multiples_graph_1024_stream.data", "karate.bin", "lesmis.bin", "jazz.bin",
		"road-minnesota.bin", "email-Eu-core.bin", "p2p-Gnutella08.bin", "ca-GrQc.bin",
		"facebook_combined.bin", "as733.bin"} {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", file)
			h := mustHeader(t, path)
			labels, truth := truthLabels(t, path, h.Updates)
			for _, r := range readerCounts {
				for _, cfg := range []testConfig{{Readers: r, Workers: 2}, {Readers: r, Workers: 3, BatchFactor: 0.02, QueueBatches: 2}} {
					res := ingestAndQuery(t, path, cfg)
					checkAgainstTruth(t, fmt.Sprintf("%s %+v", file, cfg), res, labels, truth)
				}
			}
		})
	}
}

// TestReadersGeneratedStreams: dynamic streams with deletions (Kronecker
// and Erdős–Rényi) give the generator's count with 1, 2 and 4 readers.
func TestReadersGeneratedStreams(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gens := map[string]func(out, cum *os.File) (streamgen.Summary, error){
		"kron10": func(out, cum *os.File) (streamgen.Summary, error) {
			return streamgen.Kron(ctx, streamgen.DefaultKronConfig(10, 7), out, cum)
		},
		"erdos-2000": func(out, cum *os.File) (streamgen.Summary, error) {
			return streamgen.Erdos(ctx, streamgen.DefaultErdosConfig(2000, 0.001, 3), out, cum)
		},
		"erdos-300": func(out, cum *os.File) (streamgen.Summary, error) {
			return streamgen.Erdos(ctx, streamgen.DefaultErdosConfig(300, 0.3, 4), out, cum)
		},
	}
	for name, gen := range gens {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".bin")
			sum := writeGenerated(t, path, gen)
			h := mustHeader(t, path)
			labels, truth := truthLabels(t, path, h.Updates)
			if truth != sum.Components || sum.Deletes == 0 {
				t.Fatalf("replay gives %d components, generator %d (%d deletes)", truth, sum.Components, sum.Deletes)
			}
			for _, r := range readerCounts {
				res := ingestAndQuery(t, path, testConfig{Readers: r, Workers: 2, BatchFactor: 0.1})
				checkAgainstTruth(t, fmt.Sprintf("%s readers=%d", name, r), res, labels, truth)
			}
			// Mid-stream: each answer is that of its own prefix.
			at := []uint64{h.Updates / 7, h.Updates / 3, h.Updates / 2, h.Updates - 1, h.Updates}
			for _, r := range readerCounts[1:] {
				queryAt(t, path, testConfig{Readers: r, BatchFactor: 0.1}, at)
				querySchedule(t, path, testConfig{Readers: r, BatchFactor: 0.1, NoGreedy: true}, at)
			}
		})
	}
}

// TestReadersMidStreamQueries: GraphZeppelin's multiple-query points and
// the query schedule, greedy or not, with several readers; each answer
// is checked against the union-find of its prefix by queryAt and
// querySchedule.
func TestReadersMidStreamQueries(t *testing.T) {
	want := []int{469, 307, 235, 200, 177, 151, 135, 107, 88, 78}
	at := []uint64{852, 1704, 2556, 3408, 4260, 5112, 5964, 6816, 7668, 8528}
	const path = "../testdata/multiples_graph_1024_stream.data"
	for _, r := range readerCounts[1:] {
		for _, cfg := range []testConfig{{Readers: r, BatchFactor: 0.2}, {Readers: r, NoGreedy: true, BatchFactor: 0.01, QueueBatches: 2}} {
			var got []int
			for _, res := range queryAt(t, path, cfg, at) {
				got = append(got, res.Components)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v: components %v, want %v", cfg, got, want)
			}
			querySchedule(t, path, cfg, at)
		}
		// Random toggles with lying type bytes, queried every 50 updates.
		p := filepath.Join(t.TempDir(), "toggles.bin")
		testgraph.WriteRandomStream(t, p, 60, 3000, 9, true)
		var at50 []uint64
		for q := uint64(50); q <= 3000; q += 50 {
			at50 = append(at50, q)
		}
		querySchedule(t, p, testConfig{Readers: r, BatchFactor: 0.05}, at50)
	}
}

// TestReadersStagedVertices: 70,000 vertices (the sequential path stages
// there) with 4 readers, queried mid-stream and at the end.
func TestReadersStagedVertices(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1 GB of sketches; runs in the full suite")
	}
	const n, updates = 70_000, 1_500_000
	path := filepath.Join(t.TempDir(), "staged.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 5, false)
	querySchedule(t, path, testConfig{Readers: 4, BatchFactor: 0.02}, []uint64{300_000, 1_200_000, updates})
}

// TestReadersFirstBadRecord: with several readers, a stream with bad
// records reports the first one in stream order, with its index and byte
// offset, whichever reader meets it first, and the count of updates
// before it.
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
		f, err := stream.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		e, err := newEngine(testConfig{Vertices: n, Readers: r, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Run(context.Background(), f.Cursor(), Schedule{At: []uint64{10_000, updates}, Name: path,
			Answer: func(*Result) error { return nil }})
		var fe *stream.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, stream.ErrSelfLoop) || fe.Index != 20_000 || fe.Offset != stream.RecordOffset(20_000) {
			t.Errorf("readers=%d: %v, want a self-loop at update 20000", r, err)
		} else if want := "after 20000 updates"; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("readers=%d: %q does not start with %q", r, err, want)
		}
		e.Close()
		f.Close()
	}
}

// TestReadersCancel: a cancelled context stops parallel readers, and Run
// says where it stopped without an answer.
func TestReadersCancel(t *testing.T) {
	const path = "../testdata/facebook_combined.bin"
	h := mustHeader(t, path)
	for _, r := range readerCounts[1:] {
		e, src := openEngine(t, path, testConfig{Readers: r})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		answered := false
		_, err := e.Run(ctx, src, Schedule{At: []uint64{h.Updates}, Name: path,
			Answer: func(*Result) error { answered = true; return nil }})
		if err == nil || answered || !strings.Contains(err.Error(), "interrupted after") {
			t.Errorf("readers=%d: %v (answered %v), want an interruption without an answer", r, err, answered)
		}
	}
}

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
