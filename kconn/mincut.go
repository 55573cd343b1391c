package kconn

import (
	"container/heap"
	"slices"

	"sketchcc/dsu"
)

// wedge is an edge of weight w between super-vertices a and b.
type wedge struct {
	a, b uint32
	w    int
}

// cappedMinCut returns min(k, λ) of the connected multigraph on n >= 2
// vertices with edges, and, when it is below k, the vertices of one side
// of a minimum cut. It is Stoer and Wagner's algorithm (JACM 1997) with
// Nagamochi and Ibaraki's contraction: each phase builds a maximum
// adjacency order, in which an edge e = (x, y) scanned when y's attachment
// reaches q(e) proves λ(x, y) >= q(e); every edge with q(e) at least the
// best cut found so far (at most k) is contracted with the phase's last
// two vertices, since no cut smaller than that best separates its ends.
// Each phase contracts at least one pair, and on dense graphs most of
// them.
func cappedMinCut(n int, edges []wedge, k int) (int, []uint32) {
	best := k
	var side []uint32
	// owner maps each original vertex to its current super-vertex.
	owner := make([]uint32, n)
	for v := range owner {
		owner[v] = uint32(v)
	}
	sideOf := func(s uint32) []uint32 {
		var out []uint32
		for v, o := range owner {
			if o == s {
				out = append(out, uint32(v))
			}
		}
		return out
	}
	for m := n; m > 1; {
		g := newWCSR(m, edges)
		for v := range m {
			if d := g.degree(uint32(v)); d < best {
				best, side = d, sideOf(uint32(v))
			}
		}
		d := dsu.New(uint32(m))
		last, cutOfPhase := g.maxAdjacency(best, d)
		if cutOfPhase < best {
			best, side = cutOfPhase, sideOf(last[1])
		}
		d.Union(last[0], last[1])
		// Renumber the super-vertices densely and merge parallel edges.
		ids := d.Labels()
		for v, o := range owner {
			owner[v] = ids[o]
		}
		edges = contract(edges, ids)
		m = d.Sets()
	}
	return best, side
}

// contract maps every edge through ids, drops the loops and merges the
// parallel edges, adding their weights.
func contract(edges []wedge, ids []uint32) []wedge {
	out := edges[:0]
	for _, e := range edges {
		a, b := ids[e.a], ids[e.b]
		if a == b {
			continue
		}
		out = append(out, wedge{a: min(a, b), b: max(a, b), w: e.w})
	}
	slices.SortFunc(out, func(x, y wedge) int {
		if x.a != y.a {
			return int(x.a) - int(y.a)
		}
		return int(x.b) - int(y.b)
	})
	merged := out[:0]
	for _, e := range out {
		if l := len(merged); l > 0 && merged[l-1].a == e.a && merged[l-1].b == e.b {
			merged[l-1].w += e.w
			continue
		}
		merged = append(merged, e)
	}
	return merged
}

// wcsr is a weighted multigraph in compressed rows: the weight of slot i
// is that of edge eid[i].
type wcsr struct {
	*csr
	edges []wedge
}

func newWCSR(m int, edges []wedge) *wcsr {
	return &wcsr{csr: newCSR(m, len(edges), func(i int) (uint32, uint32) { return edges[i].a, edges[i].b }), edges: edges}
}

func (g *wcsr) degree(v uint32) int {
	s := 0
	for _, id := range g.eid[g.off[v]:g.off[v+1]] {
		s += g.edges[id].w
	}
	return s
}

// maxAdjacency builds a maximum adjacency order from vertex 0, unions in d
// the ends of every edge whose attachment q(e) reaches bound, and returns
// the last two vertices of the order and the last one's attachment (the
// cut of the phase: the weight between it and all the others).
func (g *wcsr) maxAdjacency(bound int, d *dsu.DSU) (last [2]uint32, cut int) {
	m := len(g.off) - 1
	attach := make([]int, m)
	in := make([]bool, m)
	h := &maxHeap{{v: 0}}
	prev, cur := uint32(0), uint32(0)
	for h.Len() > 0 {
		it := heap.Pop(h).(item)
		if in[it.v] || it.key != attach[it.v] {
			continue // stale
		}
		x := it.v
		in[x] = true
		prev, cur = cur, x
		for i := g.off[x]; i < g.off[x+1]; i++ {
			y := g.adj[i]
			if in[y] {
				continue
			}
			attach[y] += g.edges[g.eid[i]].w
			if attach[y] >= bound {
				d.Union(x, y)
			}
			heap.Push(h, item{v: y, key: attach[y]})
		}
	}
	return [2]uint32{prev, cur}, attach[cur]
}

// item is a heap entry: vertex v with attachment key when pushed.
type item struct {
	v   uint32
	key int
}

// maxHeap is a max-heap of items by key, with stale entries skipped by
// the reader.
type maxHeap []item

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i].key > h[j].key }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(item)) }
func (h *maxHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
