// Package kconn answers edge-connectivity questions exactly over a small
// graph held edge by edge: the certificate H = F1 ∪ … ∪ FK of K
// edge-disjoint spanning forests that a k-forest query extracts from the
// sketches (Ahn, Guha, McGregor, SODA 2012, §3.2; Nagamochi and Ibaraki,
// Algorithmica 1992). H has at most K·(V−1) edges and keeps every cut of
// the stream's graph G of fewer than K edges with exactly the same edges,
// so min(K, λ), the bridges (K ≥ 2) and a minimum cut of fewer than K
// edges read off H are those of G.
//
// Analyze is single-threaded and deterministic; it starts no goroutine
// and may be called from any goroutine.
package kconn

import (
	"errors"
	"fmt"
	"slices"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// ErrInput is wrapped by Analyze for an edge or a K it cannot use.
var ErrInput = errors.New("kconn: bad input")

// Answer is the edge connectivity of a graph, capped at K.
type Answer struct {
	// K is the cap: every connectivity below is min(K, λ).
	K int
	// Lambda is min(K, λ(G)) for the whole graph: 0 when it has more
	// than one component.
	Lambda int
	// Components is the number of connected components, and Labels the
	// component of each vertex in [0, Components), numbered by each
	// component's smallest vertex; len(Labels) = Vertices.
	Components int
	Labels     []uint32
	// ComponentLambda is min(K, λ) of each component, by label; a
	// component of one vertex has 0 (it has no cut).
	ComponentLambda []int
	// Bridges are the edges whose removal disconnects their component,
	// each with Src < Dst, sorted.
	Bridges []stream.Edge
	// MinCut is a minimum cut of G when Lambda < K, else nil.
	MinCut *Cut
}

// Cut is one side of a cut and the number of edges that cross it.
type Cut struct {
	// Size is the number of edges with exactly one end in Side.
	Size int
	// Side is a non-empty proper subset of the vertices, sorted.
	Side []uint32
}

// Analyze computes the Answer for the graph on vertices vertices (at
// least 2) whose edges are edges, a multigraph (a repeated edge counts as
// parallel edges), with the cap k >= 1. It returns an error wrapping
// ErrInput for an edge out of range or a self-loop, naming its position.
// Its time is O(E log E) per contraction phase of the minimum cut, which
// runs only for components without a bridge and only when k >= 3; its
// memory O(V + E).
func Analyze(vertices uint32, edges []stream.Edge, k int) (*Answer, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: k = %d, want >= 1", ErrInput, k)
	}
	if vertices < 2 {
		return nil, fmt.Errorf("%w: %d vertices, want >= 2", ErrInput, vertices)
	}
	d := dsu.New(vertices)
	for i, e := range edges {
		if e.Src >= vertices || e.Dst >= vertices || e.Src == e.Dst {
			return nil, fmt.Errorf("%w: edge %d (%d,%d) of a graph on %d vertices", ErrInput, i, e.Src, e.Dst, vertices)
		}
		d.Union(e.Src, e.Dst)
	}
	a := &Answer{K: k, Components: d.Sets(), Labels: d.Labels()}
	a.ComponentLambda = make([]int, a.Components)
	g := newCSR(int(vertices), len(edges), func(i int) (uint32, uint32) { return edges[i].Src, edges[i].Dst })
	br := g.bridges()
	a.Bridges = br.edges
	members := groupBy(a.Labels, a.Components)
	// Each component's edges and first bridge, found once: a graph of
	// many components costs O(V + E), not components × E.
	byComp := make([][]stream.Edge, a.Components)
	for _, e := range edges {
		byComp[a.Labels[e.Src]] = append(byComp[a.Labels[e.Src]], e)
	}
	firstBridge := make(map[uint32]uint32, len(br.below))
	for _, ch := range br.below {
		if _, ok := firstBridge[a.Labels[ch]]; !ok {
			firstBridge[a.Labels[ch]] = ch
		}
	}
	for c, vs := range members {
		var bside []uint32
		if ch, ok := firstBridge[uint32(c)]; ok {
			bside = br.side(ch)
		}
		lam, side := componentCut(byComp[c], vs, bside, k)
		a.ComponentLambda[c] = lam
		if a.Components == 1 && lam < k {
			a.MinCut = &Cut{Size: lam, Side: side}
		}
	}
	if a.Components == 1 {
		a.Lambda = a.ComponentLambda[0]
	} else {
		a.MinCut = &Cut{Size: 0, Side: members[0]}
	}
	return a, nil
}

// groupBy lists the vertices of each label, each list sorted.
func groupBy(labels []uint32, n int) [][]uint32 {
	out := make([][]uint32, n)
	for v, l := range labels {
		out[l] = append(out[l], uint32(v))
	}
	return out
}

// componentCut returns min(k, λ) of the component of vertices vs and
// edges edges and, when it is below k, one side of a minimum cut of the
// component; bridgeSide is the side of one of its bridges, nil if it has
// none.
func componentCut(edges []stream.Edge, vs []uint32, bridgeSide []uint32, k int) (int, []uint32) {
	if len(vs) == 1 {
		return 0, nil
	}
	if bridgeSide != nil {
		return min(k, 1), bridgeSide
	}
	if k <= 2 {
		return k, nil
	}
	local := make(map[uint32]uint32, len(vs))
	for i, v := range vs {
		local[v] = uint32(i)
	}
	sub := make([]wedge, len(edges))
	for i, e := range edges {
		sub[i] = wedge{a: local[e.Src], b: local[e.Dst], w: 1}
	}
	size, side := cappedMinCut(len(vs), sub, k)
	if size >= k {
		return k, nil
	}
	out := make([]uint32, len(side))
	for i, s := range side {
		out[i] = vs[s]
	}
	slices.Sort(out)
	return size, out
}

// csr is a graph's adjacency in compressed rows: the neighbours of v are
// adj[off[v]:off[v+1]], reached by the edges of ids eid[off[v]:off[v+1]].
type csr struct {
	off      []int
	adj, eid []uint32
}

// newCSR returns the rows of the graph on n vertices whose edge i of m has
// the ends that ends(i) returns.
func newCSR(n, m int, ends func(i int) (a, b uint32)) *csr {
	g := &csr{off: make([]int, n+1), adj: make([]uint32, 2*m), eid: make([]uint32, 2*m)}
	for i := range m {
		a, b := ends(i)
		g.off[a+1]++
		g.off[b+1]++
	}
	for v := range n {
		g.off[v+1] += g.off[v]
	}
	fill := slices.Clone(g.off[:n])
	for i := range m {
		a, b := ends(i)
		g.adj[fill[a]], g.eid[fill[a]] = b, uint32(i)
		fill[a]++
		g.adj[fill[b]], g.eid[fill[b]] = a, uint32(i)
		fill[b]++
	}
	return g
}

// bridgeSet is what bridges finds: the bridges, and for each the DFS
// subtree below it (one side of the cut it makes), as a range of the
// preorder.
type bridgeSet struct {
	edges []stream.Edge
	// below[i] is the child end of the bridge found i-th, whose subtree is
	// order[pre[child] : pre[child]+size[child]].
	below      []uint32
	order      []uint32
	pre, sizes []uint32
}

// side returns the vertices of the DFS subtree below the bridge whose
// child end is ch, sorted: one side of the cut the bridge makes.
func (b bridgeSet) side(ch uint32) []uint32 {
	p := b.pre[ch]
	side := slices.Clone(b.order[p : p+b.sizes[ch]])
	slices.Sort(side)
	return side
}

// bridges finds every bridge with Tarjan's low-link DFS (Tarjan, "A note
// on finding the bridges of a graph", IPL 1974), iteratively: a parallel
// edge is never a bridge, since the DFS skips only the edge it came by.
func (g *csr) bridges() bridgeSet {
	n := len(g.off) - 1
	const unseen = ^uint32(0)
	b := bridgeSet{pre: make([]uint32, n), sizes: make([]uint32, n), order: make([]uint32, 0, n)}
	low := make([]uint32, n)
	for v := range b.pre {
		b.pre[v] = unseen
	}
	type frame struct {
		v, via uint32 // vertex, and the edge id it was reached by
		next   int    // its next adjacency slot to look at
	}
	var stack []frame
	for root := range uint32(n) {
		if b.pre[root] != unseen {
			continue
		}
		stack = append(stack[:0], frame{v: root, via: unseen, next: g.off[root]})
		b.pre[root], low[root] = uint32(len(b.order)), uint32(len(b.order))
		b.order = append(b.order, root)
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next < g.off[f.v+1] {
				u, id := g.adj[f.next], g.eid[f.next]
				f.next++
				switch {
				case id == f.via:
				case b.pre[u] == unseen:
					b.pre[u], low[u] = uint32(len(b.order)), uint32(len(b.order))
					b.order = append(b.order, u)
					stack = append(stack, frame{v: u, via: id, next: g.off[u]})
				default:
					low[f.v] = min(low[f.v], b.pre[u])
				}
				continue
			}
			v := f.v
			b.sizes[v] = uint32(len(b.order)) - b.pre[v]
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				break
			}
			p := stack[len(stack)-1].v
			low[p] = min(low[p], low[v])
			if low[v] > b.pre[p] {
				b.edges = append(b.edges, stream.Edge{Src: min(p, v), Dst: max(p, v)})
				b.below = append(b.below, v)
			}
		}
	}
	slices.SortFunc(b.edges, func(x, y stream.Edge) int {
		if x.Src != y.Src {
			return int(x.Src) - int(y.Src)
		}
		return int(x.Dst) - int(y.Dst)
	})
	return b
}
