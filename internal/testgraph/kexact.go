package testgraph

import (
	"slices"
	"testing"

	"sketchcc/dsu"
	"sketchcc/kconn"
	"sketchcc/stream"
)

// KTruth is the exact edge connectivity of a graph, capped at K, as
// KExact computes it: the ground truth that k-forest answers are checked
// against.
type KTruth struct {
	// Labels numbers the component of each vertex in [0, Components), by
	// each component's smallest vertex.
	Labels     []uint32
	Components int
	// ComponentLambda is min(K, λ) of each component by label (0 for a
	// component of one vertex); Lambda is that of the whole graph, 0 when
	// it is disconnected. A minimum cut of size Lambda exists exactly when
	// Lambda < K.
	ComponentLambda []int
	Lambda          int
	// Bridges are the edges whose removal disconnects their component,
	// each with Src < Dst, sorted.
	Bridges []stream.Edge
}

// KExact computes the KTruth of the multigraph on n >= 1 vertices with
// edges (no self-loop, ends below n), capped at k >= 1, with algorithms
// of its own rather than package kconn's: a breadth-first spanning forest
// whose tree edges not covered by any non-tree edge's tree path are the
// bridges (covering with a union-find that jumps over covered edges), and
// for each bridgeless component whose minimum degree is above 2, capped
// unit-capacity max-flows: in the component's BFS order t1, t2, …, the
// flow from each ti to the contracted set {t0 … ti−1}, whose minimum is λ
// (the first vertex a minimum cut separates from t0 is some ti). Time
// about O(V + E) for the forest and the bridges, and K augmenting
// searches per vertex of the components that need flows.
func KExact(n uint32, edges []stream.Edge, k int) *KTruth {
	g := newKGraph(n, edges)
	f := g.bfsForest()
	tr := &KTruth{Labels: make([]uint32, n), Components: len(f.starts)}
	for v, c := range f.comp {
		tr.Labels[v] = uint32(c)
	}
	bridgeComp := make([]bool, tr.Components)
	for _, v := range g.uncovered(edges, f) {
		p := uint32(f.parent[v])
		tr.Bridges = append(tr.Bridges, stream.Edge{Src: min(p, v), Dst: max(p, v)})
		bridgeComp[f.comp[v]] = true
	}
	slices.SortFunc(tr.Bridges, func(x, y stream.Edge) int {
		if x.Src != y.Src {
			return int(x.Src) - int(y.Src)
		}
		return int(x.Dst) - int(y.Dst)
	})
	tr.ComponentLambda = make([]int, tr.Components)
	for c, start := range f.starts {
		end := len(f.order)
		if c+1 < len(f.starts) {
			end = f.starts[c+1]
		}
		switch vs := f.order[start:end]; {
		case len(vs) == 1:
			tr.ComponentLambda[c] = 0
		case bridgeComp[c]:
			tr.ComponentLambda[c] = 1
		default:
			tr.ComponentLambda[c] = g.cappedLambda(vs, k)
		}
	}
	if tr.Components == 1 {
		tr.Lambda = tr.ComponentLambda[0]
	}
	return tr
}

// kGraph is a multigraph's adjacency: vertex v's neighbours are
// to[off[v]:off[v+1]], reached by the edges of ids eid[off[v]:off[v+1]].
type kGraph struct {
	off     []int
	to, eid []uint32
	edges   []stream.Edge
}

func newKGraph(n uint32, edges []stream.Edge) *kGraph {
	g := &kGraph{off: make([]int, n+1), to: make([]uint32, 2*len(edges)), eid: make([]uint32, 2*len(edges)), edges: edges}
	for _, e := range edges {
		g.off[e.Src+1]++
		g.off[e.Dst+1]++
	}
	for v := range n {
		g.off[v+1] += g.off[v]
	}
	next := slices.Clone(g.off)
	put := func(a, b uint32, id int) {
		g.to[next[a]], g.eid[next[a]] = b, uint32(id)
		next[a]++
	}
	for id, e := range edges {
		put(e.Src, e.Dst, id)
		put(e.Dst, e.Src, id)
	}
	return g
}

// forest is a breadth-first spanning forest: the vertices in BFS order,
// component by component from its smallest vertex, where each component
// starts in order, and each vertex's component, parent (-1 for a root),
// edge to its parent (-1 for a root) and depth.
type forest struct {
	order               []uint32
	starts              []int
	comp, parent, pedge []int
	depth               []int
}

func (g *kGraph) bfsForest() *forest {
	n := len(g.off) - 1
	f := &forest{order: make([]uint32, 0, n), comp: make([]int, n), parent: make([]int, n), pedge: make([]int, n), depth: make([]int, n)}
	for v := range f.comp {
		f.comp[v] = -1
	}
	for r := range uint32(n) {
		if f.comp[r] >= 0 {
			continue
		}
		c := len(f.starts)
		f.starts = append(f.starts, len(f.order))
		f.comp[r], f.parent[r], f.pedge[r] = c, -1, -1
		f.order = append(f.order, r)
		for i := f.starts[c]; i < len(f.order); i++ {
			x := f.order[i]
			for j := g.off[x]; j < g.off[x+1]; j++ {
				if y := g.to[j]; f.comp[y] < 0 {
					f.comp[y], f.parent[y], f.pedge[y], f.depth[y] = c, int(x), int(g.eid[j]), f.depth[x]+1
					f.order = append(f.order, y)
				}
			}
		}
	}
	return f
}

// uncovered returns the non-root vertices whose edge to their parent in f
// lies on the tree path of no non-tree edge: the child ends of the
// bridges. jump[v] = v while v's parent edge is uncovered; covering it
// sets jump[v] to the parent, so finding the nearest uncovered ancestor
// skips covered edges.
func (g *kGraph) uncovered(edges []stream.Edge, f *forest) []uint32 {
	jump := make([]int, len(f.comp))
	for v := range jump {
		jump[v] = v
	}
	find := func(v int) int {
		for jump[v] != v {
			jump[v] = jump[jump[v]]
			v = jump[v]
		}
		return v
	}
	for id, e := range edges {
		if f.pedge[e.Src] == id || f.pedge[e.Dst] == id {
			continue
		}
		a, b := find(int(e.Src)), find(int(e.Dst))
		for a != b {
			if f.depth[a] < f.depth[b] {
				a, b = b, a
			}
			jump[a] = f.parent[a]
			a = find(a)
		}
	}
	var out []uint32
	for v, j := range jump {
		if j == v && f.parent[v] >= 0 {
			out = append(out, uint32(v))
		}
	}
	return out
}

// cappedLambda returns min(k, λ) of the bridgeless connected component
// whose vertices in BFS order are vs (at least 2), so λ >= 2.
func (g *kGraph) cappedLambda(vs []uint32, k int) int {
	best := k
	for _, v := range vs {
		best = min(best, g.off[v+1]-g.off[v])
	}
	if best <= 2 {
		return best
	}
	fl := newFlow(g)
	fl.inS[vs[0]] = true
	for _, t := range vs[1:] {
		best = min(best, fl.maxFlow(t, best))
		if best == 2 {
			break
		}
		fl.inS[t] = true
	}
	return best
}

// flow holds the state of unit-capacity max-flows from single vertices to
// the contracted set inS: the net flow of each edge in its Src→Dst
// direction, and the search's marks.
type flow struct {
	g       *kGraph
	inS     []bool
	net     []int8
	seen    []int
	stamp   int
	via     []int // adjacency slot by which the search reached a vertex
	from    []uint32
	touched []int
}

func newFlow(g *kGraph) *flow {
	n := len(g.off) - 1
	return &flow{g: g, inS: make([]bool, n), net: make([]int8, len(g.edges)), seen: make([]int, n), via: make([]int, n), from: make([]uint32, n)}
}

// residual is the capacity left on edge id in the direction from x.
func (fl *flow) residual(x uint32, id uint32) int {
	if fl.g.edges[id].Src == x {
		return 1 - int(fl.net[id])
	}
	return 1 + int(fl.net[id])
}

// maxFlow returns min(limit, the max flow from t to the set inS), with
// every edge of capacity 1 in each direction, and clears its flow.
func (fl *flow) maxFlow(t uint32, limit int) int {
	g := fl.g
	paths := 0
	for ; paths < limit; paths++ {
		fl.stamp++
		fl.seen[t] = fl.stamp
		queue := []uint32{t}
		end := -1
		for qi := 0; qi < len(queue) && end < 0; qi++ {
			x := queue[qi]
			for j := g.off[x]; j < g.off[x+1]; j++ {
				y := g.to[j]
				if fl.seen[y] == fl.stamp || fl.residual(x, g.eid[j]) == 0 {
					continue
				}
				fl.seen[y], fl.via[y], fl.from[y] = fl.stamp, j, x
				if fl.inS[y] {
					end = int(y)
					break
				}
				queue = append(queue, y)
			}
		}
		if end < 0 {
			break
		}
		for y := uint32(end); y != t; y = fl.from[y] {
			id := g.eid[fl.via[y]]
			if g.edges[id].Src == fl.from[y] {
				fl.net[id]++
			} else {
				fl.net[id]--
			}
			fl.touched = append(fl.touched, int(id))
		}
	}
	for _, id := range fl.touched {
		fl.net[id] = 0
	}
	fl.touched = fl.touched[:0]
	return paths
}

// CheckForests fails tb unless each of forests is a spanning forest of
// the graph on n vertices with edges minus the forests before it.
func CheckForests(tb testing.TB, name string, n uint32, edges []stream.Edge, forests [][]stream.Edge) {
	tb.Helper()
	rest := map[stream.Edge]bool{}
	for _, e := range edges {
		rest[stream.Edge{Src: min(e.Src, e.Dst), Dst: max(e.Src, e.Dst)}] = true
	}
	for i, f := range forests {
		full := dsu.New(n)
		for e := range rest {
			full.Union(e.Src, e.Dst)
		}
		d := dsu.New(n)
		for _, e := range f {
			if !rest[e] {
				tb.Fatalf("%s: forest %d: edge %v is not in the graph minus the earlier forests", name, i+1, e)
			}
			if _, merged := d.Union(e.Src, e.Dst); !merged {
				tb.Fatalf("%s: forest %d: edge %v closes a cycle", name, i+1, e)
			}
			delete(rest, e)
		}
		if d.Sets() != full.Sets() {
			tb.Fatalf("%s: forest %d leaves %d trees; the graph minus the earlier forests has %d components",
				name, i+1, d.Sets(), full.Sets())
		}
	}
}

// CheckK checks a k-forest query's answer over the graph on n vertices
// whose final edge set is edges (a simple graph): that forests are K
// successive spanning forests (CheckForests), and that kconn.Analyze of
// their union gives the components, min(k, λ) of the graph and of each
// component, the bridges and the size of a minimum cut of KExact's answer
// over edges, with a cut side that edges cross that many times. It
// returns the answer read off the forests and fails tb otherwise.
func CheckK(tb testing.TB, name string, n uint32, edges []stream.Edge, forests [][]stream.Edge, k int) *kconn.Answer {
	tb.Helper()
	CheckForests(tb, name, n, edges, forests)
	var cert []stream.Edge
	for _, f := range forests {
		cert = append(cert, f...)
	}
	got, err := kconn.Analyze(n, cert, k)
	if err != nil {
		tb.Fatal(err)
	}
	want := KExact(n, edges, k)
	if got.Lambda != want.Lambda || !slices.Equal(got.ComponentLambda, want.ComponentLambda) ||
		!slices.Equal(got.Labels, want.Labels) || !slices.Equal(got.Bridges, want.Bridges) {
		tb.Fatalf("%s k=%d: λ %d per component %v, %d bridges; exact λ %d per component %v, %d bridges",
			name, k, got.Lambda, got.ComponentLambda, len(got.Bridges), want.Lambda, want.ComponentLambda, len(want.Bridges))
	}
	if (got.MinCut != nil) != (want.Lambda < k) {
		tb.Fatalf("%s k=%d: min cut %v, exact λ %d", name, k, got.MinCut, want.Lambda)
	}
	if got.MinCut != nil {
		side := map[uint32]bool{}
		for _, v := range got.MinCut.Side {
			side[v] = true
		}
		cross := 0
		for _, e := range edges {
			if side[e.Src] != side[e.Dst] {
				cross++
			}
		}
		if got.MinCut.Size != want.Lambda || cross != want.Lambda || len(side) == 0 || len(side) == int(n) {
			tb.Fatalf("%s k=%d: min cut of size %d, side of %d vertices crossing %d edges of the graph; exact size %d",
				name, k, got.MinCut.Size, len(side), cross, want.Lambda)
		}
	}
	return got
}
