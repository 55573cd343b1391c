package cc

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"sketchcc/dsu"
	"sketchcc/sketch"
	"sketchcc/stream"
)

func mustParams(t testing.TB, v uint32, f float64, seed uint64) sketch.Params {
	t.Helper()
	p, err := sketch.NewParams(v, f, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// canonical returns the edge {a, b} with Src <= Dst, as Forest lists its
// edges.
func canonical(a, b uint32) stream.Edge {
	return stream.Edge{Src: min(a, b), Dst: max(a, b)}
}

// toggle XORs the edge {u, v} into both endpoints' sketches in tab.
func toggle(tab *sketch.Table, u, v uint32) {
	tab.ApplyBatch(u, []uint32{v})
	tab.ApplyBatch(v, []uint32{u})
}

// same reports whether a and b are in one set of d.
func same(d *dsu.DSU, a, b uint32) bool { return d.Find(a) == d.Find(b) }

// fullForest runs a full query's Boruvka over tab from the partition in
// d, with every column.
func fullForest(tab *sketch.Table, d *dsu.DSU, workers int) (Forest, BoruvkaStats, error) {
	return spanningForest(tab.Params(), tableColumns(tab), d, workers, tab.Params().Columns(), resume{implicit: noVertex})
}

// randomGraph returns the edges of a G(n, m) graph, plus extra edges
// inserted and deleted again (toggled twice), as a list of updates.
func randomGraph(rng *rand.Rand, n uint32, m int) (final []stream.Edge, updates []stream.Edge) {
	present := map[stream.Edge]bool{}
	for len(present) < m {
		a, b := rng.Uint32N(n), rng.Uint32N(n)
		if a == b {
			continue
		}
		present[canonical(a, b)] = true
	}
	for e := range present {
		final = append(final, e)
		updates = append(updates, e)
	}
	for range m / 3 { // transient edges: inserted and deleted
		a, b := rng.Uint32N(n), rng.Uint32N(n)
		e := canonical(a, b)
		if a == b || present[e] {
			continue
		}
		updates = append(updates, e, e)
	}
	rng.Shuffle(len(updates), func(i, j int) { updates[i], updates[j] = updates[j], updates[i] })
	return final, updates
}

// TestSpanningForestMatchesDSU checks Boruvka (spanningForest) over the sketches against a
// union-find over the final edge set, on random graphs from empty to dense,
// and checks the forest: Vertices − Components real edges that span the
// same partition.
func TestSpanningForestMatchesDSU(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 43))
	cases := []struct {
		n uint32
		m int
	}{{2, 0}, {2, 1}, {3, 1}, {50, 0}, {50, 20}, {200, 150}, {200, 400}, {1000, 600}, {1000, 5000}, {3000, 2900}, {500, 60000}}
	for _, tc := range cases {
		for seed := range uint64(3) {
			p := mustParams(t, tc.n, 1, seed+1)
			tab := sketch.NewTable(p)
			final, updates := randomGraph(rng, tc.n, tc.m)
			for _, e := range updates {
				toggle(tab, e.Src, e.Dst)
			}
			truth := dsu.New(tc.n)
			isEdge := map[stream.Edge]bool{}
			for _, e := range final {
				truth.Union(e.Src, e.Dst)
				isEdge[e] = true
			}
			d := dsu.New(tc.n)
			forest, st, err := fullForest(tab, d, 1)
			if err != nil {
				t.Fatalf("n=%d m=%d seed=%d: %v", tc.n, tc.m, seed, err)
			}
			if d.Sets() != truth.Sets() {
				t.Fatalf("n=%d m=%d seed=%d: %d components, want %d (stats %+v)", tc.n, tc.m, seed, d.Sets(), truth.Sets(), st)
			}
			for v := range tc.n {
				if same(d, v, 0) != same(truth, v, 0) {
					t.Fatalf("n=%d m=%d: partition differs at vertex %d", tc.n, tc.m, v)
				}
			}
			checkForest(t, forest, isEdge, tc.n, truth.Sets())
			if st.BadSamples != 0 {
				t.Errorf("n=%d m=%d: %d bad samples", tc.n, tc.m, st.BadSamples)
			}
			// The query must not change the sketches, and the answer must
			// not depend on the number of goroutines: a second, parallel
			// query gives the same forest.
			d2 := dsu.New(tc.n)
			forest2, _, err := fullForest(tab, d2, 4)
			if err != nil || d2.Sets() != d.Sets() || !slices.Equal(forest.Edges, forest2.Edges) {
				t.Fatalf("parallel query: %d components, %v, same forest %v", d2.Sets(), err,
					slices.Equal(forest.Edges, forest2.Edges))
			}
			// Leaving any one supernode's members unlisted (its view is the
			// XOR of the others') gives the same components and a spanning
			// forest of the graph (its edges come in another order, so
			// another may close a cycle first).
			d3 := dsu.New(tc.n)
			implicit := rng.Uint32N(tc.n)
			forest3, st3, err := spanningForest(tab.Params(), tableColumns(tab), d3, 2, p.Columns(), resume{implicit: implicit})
			if err != nil || st3.Vertices != int(tc.n) {
				t.Fatalf("n=%d m=%d seed=%d, vertex %d unlisted: %v, %+v", tc.n, tc.m, seed, implicit, err, st3)
			}
			for v := range tc.n {
				if same(d3, v, 0) != same(truth, v, 0) {
					t.Fatalf("n=%d m=%d seed=%d, vertex %d unlisted: partition differs at vertex %d", tc.n, tc.m, seed, implicit, v)
				}
			}
			checkForest(t, forest3, isEdge, tc.n, truth.Sets())
		}
	}
}

// checkForest fails t unless forest is a spanning forest of the graph
// whose edges isEdge holds, on n vertices in components components.
func checkForest(t *testing.T, forest Forest, isEdge map[stream.Edge]bool, n uint32, components int) {
	t.Helper()
	if len(forest.Edges) != int(n)-components {
		t.Fatalf("forest has %d edges, want %d", len(forest.Edges), int(n)-components)
	}
	fd := dsu.New(n)
	for _, e := range forest.Edges {
		if !isEdge[e] {
			t.Fatalf("forest edge %v is not in the graph", e)
		}
		if _, ok := fd.Union(e.Src, e.Dst); !ok {
			t.Fatalf("forest edge %v closes a cycle", e)
		}
	}
}

// TestSpanningForestRunsOut: with too few columns for the rounds a graph
// needs, the query must say so instead of answering.
func TestSpanningForestRunsOut(t *testing.T) {
	p := mustParams(t, 4096, 1, 1)
	tab := sketch.NewTable(p)
	for v := uint32(0); v+1 < 4096; v++ {
		toggle(tab, v, v+1)
	}
	// One round (as if the sketch had one column) cannot join a path of
	// 4096 vertices.
	_, _, err := spanningForest(tab.Params(), tableColumns(tab), dsu.New(4096), 1, 1, resume{implicit: noVertex})
	if !errors.Is(err, ErrTooManyRounds) {
		t.Fatalf("err = %v, want ErrTooManyRounds", err)
	}
}

// BenchmarkSpanningForest runs a full Boruvka query, on all cores, over a
// random graph with average degree 16.
func BenchmarkSpanningForest(b *testing.B) {
	for _, lg := range []int{12, 13, 15, 17} {
		b.Run("vertices=2^"+strconv.Itoa(lg), func(b *testing.B) {
			n := uint32(1) << lg
			_, tab := degree16Table(b, n)
			d := dsu.New(n)
			b.ReportAllocs()
			for b.Loop() {
				d.Reset()
				if _, _, err := fullForest(tab, d, runtime.GOMAXPROCS(0)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "vertices/s")
		})
	}
}

// degree16Table returns the sketches of a random graph on n vertices with
// average degree 16.
func degree16Table(b *testing.B, n uint32) (sketch.Params, *sketch.Table) {
	p := mustParams(b, n, 1, 1)
	tab := sketch.NewTable(p)
	rng := rand.New(rand.NewPCG(3, 3))
	for v := range n {
		for range 8 {
			u := rng.Uint32N(n)
			if u == v {
				continue
			}
			toggle(tab, u, v)
		}
	}
	return p, tab
}

// BenchmarkReopenedQuery is a query that reuses the last answer: one
// forest edge of the giant component is deleted, and Boruvka resolves the
// re-opened component from the trees of the forest edges still present,
// as Room.Query does (the sketches hold every update).
func BenchmarkReopenedQuery(b *testing.B) {
	for _, lg := range []int{13, 15, 17} {
		b.Run("vertices=2^"+strconv.Itoa(lg), func(b *testing.B) {
			n := uint32(1) << lg
			p, tab := degree16Table(b, n)
			d := dsu.New(n)
			forest, _, err := fullForest(tab, d, runtime.GOMAXPROCS(0))
			if err != nil {
				b.Fatal(err)
			}
			var g greedyCC
			g.reset(d, forest.Edges)
			e := forest.Edges[len(forest.Edges)/2]
			toggle(tab, e.Src, e.Dst)
			g.apply([]stream.Update{{Type: stream.Delete, Edge: e}})
			rounds, reads := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				d, _, finished := g.start()
				_, st, err := spanningForest(tab.Params(), tableColumns(tab), d, runtime.GOMAXPROCS(0), p.Columns(),
					resume{finished: finished, implicit: largestTree(d, finished)})
				if err != nil {
					b.Fatal(err)
				}
				rounds, reads = st.Rounds, st.Reads
			}
			b.ReportMetric(float64(rounds), "rounds")
			b.ReportMetric(float64(reads), "sketches-read")
		})
	}
}

// largestTree returns the root of d's largest set not marked finished, as
// Room.Query picks the implicit supernode.
func largestTree(d *dsu.DSU, finished []bool) uint32 {
	largest := noVertex
	for v := range d.Len() {
		if d.Find(v) == v && !finished[v] && (largest == noVertex || d.Size(v) > d.Size(largest)) {
			largest = v
		}
	}
	return largest
}
