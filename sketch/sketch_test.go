package sketch

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sketchcc/dsu"
	"sketchcc/stream"
)

func TestParamsGeometry(t *testing.T) {
	f := func(v uint32, factor float64, rows, cols, bytes int) {
		t.Helper()
		p := mustParams(t, v, factor, 1)
		if p.Rows != rows || p.Columns != cols || p.BytesPerVertex() != bytes {
			t.Errorf("V=%d f=%v: R=%d S=%d bytes=%d, want R=%d S=%d bytes=%d",
				v, factor, p.Rows, p.Columns, p.BytesPerVertex(), rows, cols, bytes)
		}
	}
	// DESIGN.md §2: V = 2^17 gives R = 34, S = 24, 817 buckets, 13,072 bytes.
	f(1<<17, 1, 34, 24, 13072)
	// kron15: log2(2^15·(2^15−1)/2) just under 29, so R = 30; S = ceil(15/0.737) = 21.
	f(1<<15, 1, 30, 21, 16*(21*30+1))
	// Small graphs take the floor of 18 columns.
	f(1024, 1, 20, 18, 16*(18*20+1))
	f(2, 1, 1, 18, 16*19)
	f(1<<17, 2, 34, 47, 16*(47*34+1))
	for _, bad := range []struct {
		v uint32
		f float64
	}{{0, 1}, {1, 1}, {10, 0}, {10, -1}, {1 << 20, 1e9}, {1 << 20, 1e30}, {2, 1e300}} {
		if _, err := NewParams(bad.v, bad.f, 1); !errors.Is(err, ErrParams) {
			t.Errorf("NewParams(%d, %v) = %v, want ErrParams", bad.v, bad.f, err)
		}
	}
}

// TestLinearity: sketch(A) XOR sketch(B) == sketch(A △ B), and inserting
// then deleting an edge leaves the zero sketch, which samples Zero.
func TestLinearity(t *testing.T) {
	p := mustParams(t, 5000, 1, 11)
	rng := rand.New(rand.NewPCG(1, 2))
	per := p.BucketsPerVertex()
	for trial := range 50 {
		v := rng.Uint32N(5000)
		a := randomNeighbors(rng, 5000, v, 1+rng.IntN(300))
		b := randomNeighbors(rng, 5000, v, 1+rng.IntN(300))
		sa, sb, sx := make([]Bucket, per), make([]Bucket, per), make([]Bucket, per)
		p.Delta(sa, v, a)
		p.Delta(sb, v, b)
		Merge(sa, sb)
		inA := map[uint32]bool{}
		for _, u := range a {
			inA[u] = true
		}
		var x []uint32
		for _, u := range b {
			if inA[u] {
				delete(inA, u)
			} else {
				x = append(x, u)
			}
		}
		for u := range inA {
			x = append(x, u)
		}
		p.Delta(sx, v, x)
		for i := range sa {
			if sa[i] != sx[i] {
				t.Fatalf("trial %d: bucket %d differs: %+v vs %+v", trial, i, sa[i], sx[i])
			}
		}
		// Insert then delete cancels.
		p.ApplyBatch(sx, v, x)
		if !IsZero(sx) {
			t.Fatalf("trial %d: insert then delete left a non-zero sketch", trial)
		}
		if _, r, _ := p.Sample(sx, 0); r != Zero {
			t.Fatalf("trial %d: zero sketch samples %v", trial, r)
		}
	}
}

func TestSampleSingleEdgeIsGood(t *testing.T) {
	p := mustParams(t, 100, 1, 3)
	s := make([]Bucket, p.BucketsPerVertex())
	p.Update(s, EdgeIndex(7, 42))
	for c := range p.Columns {
		idx, r, _ := p.Sample(s, c)
		if r != Good || idx != EdgeIndex(42, 7) {
			t.Fatalf("column %d: %v %#x", c, r, idx)
		}
	}
}

func TestApplyBatchAllocatesNothing(t *testing.T) {
	p := mustParams(t, 1<<17, 1, 3)
	tab := NewTable(mustParams(t, 1<<10, 1, 3))
	s := make([]Bucket, p.BucketsPerVertex())
	nb := randomNeighbors(rand.New(rand.NewPCG(1, 1)), 1<<17, 5, 1000)
	if n := testing.AllocsPerRun(20, func() { p.ApplyBatch(s, 5, nb) }); n != 0 {
		t.Errorf("ApplyBatch allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(20, func() { tab.ApplyBatch(5, nb[:10]) }); n != 0 {
		t.Errorf("Table.ApplyBatch allocates %v times per call", n)
	}
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
		present[stream.Edge{Src: a, Dst: b}.Canonical()] = true
	}
	for e := range present {
		final = append(final, e)
		updates = append(updates, e)
	}
	for range m / 3 { // transient edges: inserted and deleted
		a, b := rng.Uint32N(n), rng.Uint32N(n)
		e := stream.Edge{Src: a, Dst: b}.Canonical()
		if a == b || present[e] {
			continue
		}
		updates = append(updates, e, e)
	}
	rng.Shuffle(len(updates), func(i, j int) { updates[i], updates[j] = updates[j], updates[i] })
	return final, updates
}

// TestSpanningForestMatchesDSU checks Boruvka over the sketches against a
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
			tab := NewTable(p)
			final, updates := randomGraph(rng, tc.n, tc.m)
			for _, e := range updates {
				idx := EdgeIndex(e.Src, e.Dst)
				p.Update(tab.Sketch(e.Src), idx)
				p.Update(tab.Sketch(e.Dst), idx)
			}
			truth := dsu.New(tc.n)
			isEdge := map[stream.Edge]bool{}
			for _, e := range final {
				truth.Union(e.Src, e.Dst)
				isEdge[e] = true
			}
			d := dsu.New(tc.n)
			forest, st, err := SpanningForest(tab, d)
			if err != nil {
				t.Fatalf("n=%d m=%d seed=%d: %v", tc.n, tc.m, seed, err)
			}
			if d.Sets() != truth.Sets() {
				t.Fatalf("n=%d m=%d seed=%d: %d components, want %d (stats %+v)", tc.n, tc.m, seed, d.Sets(), truth.Sets(), st)
			}
			for v := range tc.n {
				if d.Same(v, 0) != truth.Same(v, 0) {
					t.Fatalf("n=%d m=%d: partition differs at vertex %d", tc.n, tc.m, v)
				}
			}
			if len(forest.Edges) != int(tc.n)-truth.Sets() {
				t.Fatalf("forest has %d edges, want %d", len(forest.Edges), int(tc.n)-truth.Sets())
			}
			fd := dsu.New(tc.n)
			for _, e := range forest.Edges {
				if !isEdge[e] {
					t.Fatalf("forest edge %v is not in the graph", e)
				}
				if _, ok := fd.Union(e.Src, e.Dst); !ok {
					t.Fatalf("forest edge %v closes a cycle", e)
				}
			}
			if st.BadSamples != 0 {
				t.Errorf("n=%d m=%d: %d bad samples", tc.n, tc.m, st.BadSamples)
			}
			// The query must not change the sketches, and the answer must
			// not depend on the number of goroutines: a second, parallel
			// query gives the same forest.
			d2 := dsu.New(tc.n)
			forest2, _, err := SpanningForestParallel(tab, d2, 4)
			if err != nil || d2.Sets() != d.Sets() || !slices.Equal(forest.Edges, forest2.Edges) {
				t.Fatalf("parallel query: %d components, %v, same forest %v", d2.Sets(), err,
					slices.Equal(forest.Edges, forest2.Edges))
			}
		}
	}
}

// TestSpanningForestRunsOut: with too few columns for the rounds a graph
// needs, the query must say so instead of answering.
func TestSpanningForestRunsOut(t *testing.T) {
	p := mustParams(t, 4096, 1, 1)
	p.Columns = 1 // one round cannot join a path of 4096 vertices
	tab := NewTable(p)
	for v := uint32(0); v+1 < 4096; v++ {
		idx := EdgeIndex(v, v+1)
		p.Update(tab.Sketch(v), idx)
		p.Update(tab.Sketch(v+1), idx)
	}
	_, _, err := SpanningForest(tab, dsu.New(4096))
	if !errors.Is(err, ErrTooManyRounds) {
		t.Fatalf("err = %v, want ErrTooManyRounds", err)
	}
}

// TestSample_OutOfColumns checks that a column past the last, a negative
// one, or a slice of the wrong length is an error, not a panic.
func TestSample_OutOfColumns(t *testing.T) {
	p, err := NewParams(1024, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	s := make([]Bucket, p.BucketsPerVertex())
	p.Update(s, EdgeIndex(1, 2))
	p.Update(s, EdgeIndex(1, 3))
	for _, c := range []int{p.Columns, p.Columns + 5, -1} {
		_, r, err := p.Sample(s, c)
		if !errors.Is(err, ErrTooManyRounds) || r != Fail ||
			!strings.Contains(err.Error(), fmt.Sprintf("column %d of a sketch with %d columns", c, p.Columns)) {
			t.Errorf("column %d: %v, %v; want Fail and ErrTooManyRounds", c, r, err)
		}
	}
	for _, n := range []int{0, 1, p.Rows, p.BucketsPerVertex() - 1} {
		if _, _, err := p.Sample(s[:n], 0); !errors.Is(err, ErrParams) {
			t.Errorf("%d buckets: %v, want ErrParams", n, err)
		}
	}
	if _, r, err := p.Sample(s, p.Columns-1); err != nil || r == Zero {
		t.Errorf("last column: %v, %v", r, err)
	}
}
