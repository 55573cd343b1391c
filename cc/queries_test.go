package cc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sketchcc/dsu"
	"sketchcc/internal/testgraph"
	"sketchcc/offline/streamgen"
	"sketchcc/stream"
)

// queryAt ingests the stream at path, queries after each count in at (and
// checks each answer against a union-find replay of that prefix), and
// returns the answers.
func queryAt(t *testing.T, path string, cfg testConfig, at []uint64) []*Result {
	t.Helper()
	e, src := openEngine(t, path, cfg)
	if cfg.FromStart {
		e.greedyFromStart()
	}
	if cfg.Wrapped {
		src = plainSource{src}
	}
	var out []*Result
	var done uint64
	for _, pos := range at {
		n, err := e.IngestN(context.Background(), src, pos-done)
		if err != nil || n != pos-done {
			t.Fatalf("IngestN to %d: %d, %v", pos, n, err)
		}
		done = pos
		res, err := e.Query(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		labels, truth := truthLabels(t, path, pos)
		checkAgainstTruth(t, fmt.Sprintf("%s after %d (greedy answer %v, %+v)", filepath.Base(path), pos, res.Greedy, cfg),
			res, labels, truth)
		out = append(out, res)
	}
	return out
}

// TestMultiplesEvery852: GraphZeppelin's MTStreamWithMultipleQueries
// points, with the component counts the data README gives.
func TestMultiplesEvery852(t *testing.T) {
	want := []int{469, 307, 235, 200, 177, 151, 135, 107, 88, 78}
	at := []uint64{852, 1704, 2556, 3408, 4260, 5112, 5964, 6816, 7668, 8528}
	// Batch factor 1 leaves most updates in the gutters at every query, so
	// the queries that reuse the last answer read them there.
	for _, bf := range []float64{0.2, 1} {
		for _, cfg := range []testConfig{{}, {ApplyPieces: true}, {NoGreedy: true}, {FromStart: true},
			{FromStart: true, Wrapped: true}, {Wrapped: true}} {
			cfg.BatchFactor = bf
			res := queryAt(t, "../testdata/multiples_graph_1024_stream.data", cfg, at)
			var got []int
			applied := false
			for _, r := range res {
				got = append(got, r.Components)
				if r.Apply > r.CC {
					t.Errorf("%+v: %v of the CC time %v spent sketching the re-opened pieces", cfg, r.Apply, r.CC)
				}
				applied = applied || r.Apply > 0
			}
			if cfg.ApplyPieces && !applied {
				t.Errorf("%+v: no query timed sketching the re-opened pieces", cfg)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v: components %v, want %v", cfg, got, want)
			}
		}
	}
}

// TestQueriesDuringErdosStreams queries dynamic Erdős streams with many
// deletions at 12 points each, with and without the greedy shortcut, and
// checks that some queries resolve only the components a deleted forest
// edge re-opened. On an insert-only real graph every query after the first must come from the
// greedy DSU.
func TestQueriesDuringErdosStreams(t *testing.T) {
	dir := t.TempDir()
	reopened := 0
	for _, g := range []struct {
		v uint32
		p float64
	}{{1500, 0.0008}, {1000, 0.004}, {400, 0.05}, {300, 0.3}, {200, 0.6}} {
		for seed := range uint64(2) {
			path := filepath.Join(dir, fmt.Sprintf("erdos-%d-%v-%d.bin", g.v, g.p, seed))
			out, _ := os.Create(path)
			cum, _ := os.Create(path + ".cum")
			sum, err := streamgen.Erdos(context.Background(), streamgen.DefaultErdosConfig(g.v, g.p, seed+11), out, cum)
			out.Close()
			cum.Close()
			if err != nil {
				t.Fatal(err)
			}
			// Dense graphs have small forests, so closely spaced queries
			// often find the greedy DSU still valid.
			points := uint64(12)
			if g.p >= 0.5 {
				points = 80
			}
			var at []uint64
			for i := uint64(1); i <= points; i++ {
				at = append(at, sum.Updates*i/points)
			}
			greedy, partial := 0, 0
			for _, cfg := range []testConfig{{}, {ApplyPieces: true}, {NoGreedy: true}, {FromStart: true},
				{FromStart: true, Wrapped: true, ApplyPieces: true}} {
				cfg.BatchFactor = 0.1
				noGreedy := cfg.NoGreedy
				for _, r := range queryAt(t, path, cfg, at) {
					if r.Greedy {
						if noGreedy {
							t.Fatal("greedy answer with NoGreedy set")
						}
						greedy++
					}
					if !r.Greedy && r.Boruvka.Vertices < int(g.v) {
						if noGreedy {
							t.Fatalf("Boruvka over %d of %d vertices with NoGreedy set", r.Boruvka.Vertices, g.v)
						}
						partial++
					}
				}
			}
			reopened += partial
			t.Logf("%s: %d updates, %d deletes, %d of %d queries answered greedily, %d by Boruvka over re-opened components only",
				filepath.Base(path), sum.Updates, sum.Deletes, greedy, points, partial)
		}
	}
	if reopened == 0 {
		t.Error("no query resolved only the re-opened components")
	}
	// Insert-only: the greedy DSU stays valid.
	var at []uint64
	for i := uint64(1); i <= 10; i++ {
		at = append(at, 14484*i/10)
	}
	for i, r := range queryAt(t, "../testdata/ca-GrQc.bin", testConfig{}, at) {
		if r.Greedy != (i > 0) {
			t.Errorf("ca-GrQc query %d: greedy = %v", i, r.Greedy)
		}
	}
}

// plainSource hides the concrete type of a stream.Source.
type plainSource struct{ stream.Source }

// TestGreedyIllFormedStream: the greedy shortcut must stay exact when type
// bytes lie (duplicate inserts, deletes of absent edges), because the
// sketches toggle whatever the type byte says. The stream is random toggles
// on a small vertex set with random type bytes, queried every 50 updates.
func TestGreedyIllFormedStream(t *testing.T) {
	const n, updates = 60, 3000
	path := filepath.Join(t.TempDir(), "toggles.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 9, true)
	var at []uint64
	for p := uint64(50); p <= updates; p += 50 {
		at = append(at, p)
	}
	greedy := 0
	for _, r := range queryAt(t, path, testConfig{BatchFactor: 0.05}, at) {
		if r.Greedy {
			greedy++
		}
	}
	for _, r := range querySchedule(t, path, testConfig{BatchFactor: 0.05}, at) {
		if r.Greedy {
			greedy++
		}
	}
	t.Logf("%d of %d queries answered greedily, by Query and by Run", greedy, 2*len(at))
}

// TestGreedyForest drives the greedy state with random updates of a small
// graph and a query now and then, and checks after each step that its
// parent-pointer forest is the forest the rules give (kept alongside as a
// set of edges), acyclic, made of present edges, each tree inside one set,
// and that the sets hold every component.
func TestGreedyForest(t *testing.T) {
	const n = 60
	rng := rand.New(rand.NewPCG(3, 5))
	var g greedyCC
	g.reset(dsu.New(n), nil)
	present := map[stream.Edge]bool{}
	forest := map[stream.Edge]bool{}
	for step := range 20000 {
		u, v := rng.Uint32N(n), rng.Uint32N(n)
		if u == v {
			continue
		}
		e := stream.Edge{Src: min(u, v), Dst: max(u, v)}
		present[e] = !present[e]
		lu, lv := g.label[u], g.label[v]
		switch {
		case lu != lv && !g.dirty[lu] && !g.dirty[lv]:
			forest[e] = true
		case lu == lv && forest[e]:
			delete(forest, e)
		}
		g.apply([]stream.Update{{Edge: stream.Edge{Src: u, Dst: v}}})
		if rng.IntN(300) == 0 {
			// A query: Boruvka joins the pieces with present edges.
			d, _, _ := g.start()
			var added []stream.Edge
			for x, in := range present {
				if !in {
					continue
				}
				if _, merged := d.Union(x.Src, x.Dst); merged {
					added = append(added, x)
					forest[x] = true
				}
			}
			g.extend(d, added)
		}
		checkGreedyForest(t, step, &g, present, forest)
	}
}

func checkGreedyForest(t *testing.T, step int, g *greedyCC, present, forest map[stream.Edge]bool) {
	t.Helper()
	es := g.edges()
	if len(es) != len(forest) || g.forestN != len(forest) {
		t.Fatalf("step %d: %d forest edges listed, %d counted, want %d", step, len(es), g.forestN, len(forest))
	}
	for _, e := range es {
		if !forest[e] || !present[e] {
			t.Fatalf("step %d: forest edge %v: in the rules' forest %v, present %v", step, e, forest[e], present[e])
		}
		if g.label[e.Src] != g.label[e.Dst] {
			t.Fatalf("step %d: forest edge %v spans two sets", step, e)
		}
	}
	for v := range uint32(len(g.parent)) {
		x, hops := v, 0
		for g.parent[x] != noParent {
			if x, hops = g.parent[x], hops+1; hops > len(g.parent) {
				t.Fatalf("step %d: a cycle of parents through %d", step, v)
			}
		}
	}
	truth := dsu.New(uint32(len(g.label)))
	for e, in := range present {
		if in {
			truth.Union(e.Src, e.Dst)
			if g.label[e.Src] != g.label[e.Dst] {
				t.Fatalf("step %d: present edge %v spans two sets", step, e)
			}
		}
	}
	for v := range uint32(len(g.label)) {
		if l := g.label[v]; !g.dirty[l] && truth.Find(v) != truth.Find(l) {
			t.Fatalf("step %d: clean set %d holds %d, outside its component", step, l, v)
		}
	}
}

// querySchedule is queryAt through Room.Run, the schedule main-node runs:
// each answer must be that of its own point of the stream.
func querySchedule(t *testing.T, path string, cfg testConfig, at []uint64) []*Result {
	t.Helper()
	e, src := openEngine(t, path, cfg)
	if cfg.FromStart {
		e.greedyFromStart()
	}
	if cfg.Wrapped {
		src = plainSource{src}
	}
	var out []*Result
	_, err := e.Run(context.Background(), src, Schedule{At: at, Name: path, Answer: func(res *Result) error {
		labels, truth := truthLabels(t, path, res.AfterUpdates)
		checkAgainstTruth(t, fmt.Sprintf("%s scheduled after %d (greedy %v)", filepath.Base(path), res.AfterUpdates, res.Greedy),
			res, labels, truth)
		out = append(out, res)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScheduledQueries: the query schedule answers for each point, also
// with gutters that fill up often (small batches, a short queue), and the
// greedy DSU answers most queries of an insert-only stream.
func TestScheduledQueries(t *testing.T) {
	var at []uint64
	for i := uint64(1); i <= 10; i++ {
		at = append(at, 852*i)
	}
	at[9] = 8528
	for _, cfg := range []testConfig{{}, {BatchFactor: 0.01, QueueBatches: 2}, {NoGreedy: true, Workers: 1}} {
		res := querySchedule(t, "../testdata/multiples_graph_1024_stream.data", cfg, at)
		var got []int
		for _, r := range res {
			got = append(got, r.Components)
		}
		if want := []int{469, 307, 235, 200, 177, 151, 135, 107, 88, 78}; !slices.Equal(got, want) {
			t.Errorf("%+v: %v, want %v", cfg, got, want)
		}
	}
	// Insert-only: after the first query the greedy DSU answers every
	// later one.
	var at2 []uint64
	for i := uint64(1); i <= 8; i++ {
		at2 = append(at2, 88234*i/8)
	}
	greedy := 0
	for _, r := range querySchedule(t, "../testdata/facebook_combined.bin", testConfig{BatchFactor: 0.05}, at2) {
		if r.Greedy {
			greedy++
		}
	}
	if greedy < 5 {
		t.Errorf("only %d of 8 queries on an insert-only stream came from the greedy DSU", greedy)
	}
}

// TestStagedGuttersThroughEngine runs a random toggle stream on 70,000
// vertices, above the gutters' staging threshold, with more updates than
// one staging buffer, and queries mid-buffer and at the end, by Query and
// by Run: the staged path must lose nothing.
func TestStagedGuttersThroughEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 1 GB of sketches; runs in the full suite")
	}
	const n, updates = 70_000, 1_500_000
	path := filepath.Join(t.TempDir(), "staged.bin")
	testgraph.WriteRandomStream(t, path, n, updates, 5, false)
	at := []uint64{300_000, 1_200_000, updates}
	queryAt(t, path, testConfig{BatchFactor: 0.02}, at)
	querySchedule(t, path, testConfig{BatchFactor: 0.02}, at)
}
