package cc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/offline/replay"
	"sketchcc/offline/streamgen"
	"sketchcc/stream"
)

// replayPrefix replays records [0, hi) of the binary stream at path with
// toggle semantics into an exact edge set (offline/replay).
func replayPrefix(t *testing.T, path string, hi uint64) *replay.EdgeSet {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, set, err := replay.Run(f.Reader(0, hi), replay.Config{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// truthLabels replays records [0, hi) of the binary stream at path with
// toggle semantics into an exact edge set (offline/replay) and returns the
// union-find's component labels (numbered by smallest vertex, as
// Result.Labels is) and count.
func truthLabels(t *testing.T, path string, hi uint64) (labels []uint32, components int) {
	d := replayPrefix(t, path, hi).Components()
	return d.Labels(), d.Sets()
}

// configs are the pipeline shapes every graph is run through: the answer
// must be identical across them (and equal to the union-find).
var configs = []testConfig{
	{Workers: 1},
	{Workers: 3, BatchFactor: 0.02, QueueBatches: 2},
	{Workers: 2, BatchFactor: 0.3, Seed: 12345},
	{Workers: 2, SketchFactor: 2, BatchFactor: 4},
}

// openEngine opens the binary stream at path and an Engine for it with
// cfg; both are closed when the test ends.
func openEngine(t *testing.T, path string, cfg testConfig) (engine, stream.Source) {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg.Vertices = f.Header().Vertices
	e, err := newEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, f.Cursor()
}

// ingestAndQuery runs the engine over the whole stream at path.
func ingestAndQuery(t *testing.T, path string, cfg testConfig) *Result {
	t.Helper()
	e, src := openEngine(t, path, cfg)
	if _, err := e.Ingest(context.Background(), src); err != nil {
		t.Fatal(err)
	}
	res, err := e.Query(context.Background())
	if err != nil {
		t.Fatalf("%s %+v: %v", path, cfg, err)
	}
	return res
}

func checkAgainstTruth(t *testing.T, name string, res *Result, labels []uint32, want int) {
	t.Helper()
	if res.Components != want {
		t.Errorf("%s: %d components, union-find says %d", name, res.Components, want)
	}
	if !slices.Equal(res.Labels, labels) {
		t.Errorf("%s: labels differ from the union-find partition", name)
	}
	if len(res.Forest.Edges) != len(labels)-want {
		t.Errorf("%s: forest of %d edges, want %d", name, len(res.Forest.Edges), len(labels)-want)
	}
}

// TestRealGraphs runs real graphs converted with `streamtool convert`
// (testdata/README.md gives provenance) through the engine in several
// configurations. Each answer must equal a union-find over the final edge
// set, which in turn must equal the published count in
// ../shared/data/README.md.
func TestRealGraphs(t *testing.T) {
	graphs := []struct {
		file  string
		known int // components, from ../shared/data/README.md
	}{
		{"multiples_graph_1024_stream.data", 78},
		{"karate.bin", 1},
		{"lesmis.bin", 1},
		{"jazz.bin", 1},
		{"road-minnesota.bin", 2},
		{"email-Eu-core.bin", 20}, // self-loops dropped, self-loop-only vertices kept
		{"p2p-Gnutella08.bin", 2}, // CRLF upstream
		{"ca-GrQc.bin", 355},
		{"facebook_combined.bin", 1},
		{"as733.bin", 3331}, // final snapshot over the union of all snapshots' ids
	}
	for _, g := range graphs {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", g.file)
			h := mustHeader(t, path)
			labels, truth := truthLabels(t, path, h.Updates)
			if truth != g.known {
				t.Fatalf("union-find gives %d components, the data README %d", truth, g.known)
			}
			for _, cfg := range configs {
				res := ingestAndQuery(t, path, cfg)
				checkAgainstTruth(t, fmt.Sprintf("%s %+v", g.file, cfg), res, labels, truth)
			}
		})
	}
}

func mustHeader(t *testing.T, path string) stream.Header {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Header()
}

// TestAs733Snapshots ingests the as-733 snapshot stream range by range and
// queries at every snapshot boundary: the answer must equal a union-find
// over that prefix and the per-snapshot "CC over union" column of
// ../shared/data/README.md. Ingestion resumes after each query.
func TestAs733Snapshots(t *testing.T) {
	known := testgraph.As733Components
	var summary struct {
		Snapshots []struct {
			AfterUpdates uint64 `json:"after_updates"`
			Components   int    `json:"components"`
		} `json:"snapshots"`
	}
	b, err := os.ReadFile("../testdata/as733.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	if len(summary.Snapshots) != len(known) {
		t.Fatalf("%d snapshots in as733.json, want %d", len(summary.Snapshots), len(known))
	}
	const path = "../testdata/as733.bin"
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The query that reuses the last answer, with the re-opened pieces'
	// buffered ids hashed or sketched, and the full query.
	for _, cfg := range []testConfig{{BatchFactor: 0.1}, {BatchFactor: 1}, {BatchFactor: 1, ApplyPieces: true}, {NoGreedy: true},
		{BatchFactor: 1, FromStart: true}} {
		cfg.Vertices = f.Header().Vertices
		as733Snapshots(t, f, cfg, summary.Snapshots, known)
	}
}

func as733Snapshots(t *testing.T, f *stream.File, cfg testConfig, snapshots []struct {
	AfterUpdates uint64 `json:"after_updates"`
	Components   int    `json:"components"`
}, known []int) {
	const path = "../testdata/as733.bin"
	e, err := newEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if cfg.FromStart {
		e.greedyFromStart()
	}
	var lo uint64
	for i, s := range snapshots {
		if _, err := e.Ingest(context.Background(), f.Reader(lo, s.AfterUpdates)); err != nil {
			t.Fatal(err)
		}
		lo = s.AfterUpdates
		res, err := e.Query(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		labels, truth := truthLabels(t, path, s.AfterUpdates)
		if truth != known[i] {
			t.Fatalf("snapshot %d: union-find %d, data README %d", i, truth, known[i])
		}
		checkAgainstTruth(t, fmt.Sprintf("%+v: snapshot %d after %d updates", cfg, i, s.AfterUpdates), res, labels, truth)
	}
}

// TestGeneratedStreams runs dynamic streams with deletions made by
// streamgen: a Kronecker stream of scale 10 and Erdős–Rényi streams from
// sparse (many components) to dense. Each answer must equal the
// generator's count and a union-find replay of the stream.
func TestGeneratedStreams(t *testing.T) {
	type gen struct {
		name string
		run  func(out, cum *os.File) (streamgen.Summary, error)
	}
	ctx := context.Background()
	gens := []gen{
		{"kron10", func(out, cum *os.File) (streamgen.Summary, error) {
			return streamgen.Kron(ctx, streamgen.DefaultKronConfig(10, 7), out, cum)
		}},
	}
	for _, e := range []struct {
		v uint32
		p float64
	}{{2000, 0.0004}, {2000, 0.001}, {1000, 0.01}, {300, 0.3}, {5000, 0.0003}} {
		for seed := range uint64(2) {
			gens = append(gens, gen{fmt.Sprintf("erdos-%d-%v-seed%d", e.v, e.p, seed),
				func(out, cum *os.File) (streamgen.Summary, error) {
					return streamgen.Erdos(ctx, streamgen.DefaultErdosConfig(e.v, e.p, seed+1), out, cum)
				}})
		}
	}
	dir := t.TempDir()
	for _, g := range gens {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join(dir, g.name+".bin")
			sum := writeGenerated(t, path, g.run)
			if sum.Deletes == 0 {
				t.Fatalf("stream has no deletions: %+v", sum)
			}
			h := mustHeader(t, path)
			labels, truth := truthLabels(t, path, h.Updates)
			if truth != sum.Components {
				t.Fatalf("replay gives %d components, generator %d", truth, sum.Components)
			}
			for _, cfg := range configs[:3] {
				res := ingestAndQuery(t, path, cfg)
				checkAgainstTruth(t, fmt.Sprintf("%s %+v", g.name, cfg), res, labels, truth)
			}
			t.Logf("%d vertices, %d updates (%d deletes), %d components", h.Vertices, h.Updates, sum.Deletes, truth)
		})
	}
}

// writeGenerated writes the stream run generates to path, and its
// cumulative edge file beside it, and returns run's summary.
func writeGenerated(t *testing.T, path string, run func(out, cum *os.File) (streamgen.Summary, error)) streamgen.Summary {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cum, err := os.Create(path + ".cum")
	if err != nil {
		t.Fatal(err)
	}
	defer cum.Close()
	sum, err := run(out, cum)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
