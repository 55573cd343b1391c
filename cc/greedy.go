package cc

import (
	"slices"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// greedyCC keeps the answer of the last query current while the stream
// allows it, and otherwise narrows what the next query must recompute. It
// extends the "GreedyCC" shortcut of Landscape (Tench et al., ALENEX 2025,
// §5) with the idea behind sketch-based dynamic spanning forests: a deleted
// forest edge re-opens only the component it was in.
//
// After a query, the DSU holds the components and the forest set a
// spanning forest of the graph; every set is clean. Invariants kept from
// then on, under toggle semantics:
//   - every forest edge is present in the graph, the forest is acyclic and
//     each of its trees lies inside one DSU set;
//   - every connected component of the graph lies inside one DSU set;
//   - a clean set is exactly one component, spanned by its forest edges.
//
// An update of edge e = {u, v}:
//   - between two clean sets: e cannot have been present (they were two
//     components), so it is now; union them, add e to the forest, clean;
//   - between two sets, one of them dirty: e may have been present (a
//     dirty set may be split in the graph), so its toggle may connect or
//     disconnect; union them and mark the union dirty, without e;
//   - inside a set, a forest edge: it is gone; remove it from the forest
//     and mark the set dirty (its component may have split);
//   - inside a set, any other edge: no set changes.
//
// A query answers from the DSU alone while no set is dirty. Otherwise the
// forest's trees are a partition into connected pieces, the clean sets are
// finished components, and Boruvka needs to resolve only the dirty sets,
// starting from their trees (Room.Query).
//
// The type byte is not trusted, so an ill-formed stream (a duplicate
// insert, a delete of an absent edge) cannot make the answer wrong.
//
// The sets are kept as labels (quick-find, with union by size and member
// lists), not as a union-find: an update inside a set, nearly every update
// of a dense stream once its giant component has formed, then costs one
// load per endpoint instead of two finds (BenchmarkGreedyFollow).
//
// The forest is kept as parent pointers of rooted trees, one per vertex,
// beside the labels: an update inside a set is a forest edge exactly when
// one endpoint is the other's parent, two loads from arrays the label
// test has just read at the same indices, with no hash. A forest edge
// added between two clean sets re-roots the smaller set's tree at its
// endpoint, a walk no longer than the relabelling that union does anyway.
//
// greedyCC is not safe for concurrent use; the ingesting goroutine owns it.
type greedyCC struct {
	valid   bool
	label   []uint32 // by vertex: its set's id, a member
	next    []uint32 // by vertex: the next member of its set, circular
	parent  []uint32 // by vertex: its parent in the forest, or noParent at a tree's root
	size    []uint32 // by set id: its members
	sets    int
	dirty   []bool // by set id
	dirtyN  int    // dirty sets
	forestN int    // forest edges: vertices with a parent
	buf     greedyBuffers
}

// greedyBuffers is greedyCC's working memory, reused from query to query
// (a query then writes no freshly mapped memory for it): pieces and
// finished are start's results, valid until the next start; rows, adj,
// seen and stack are setForest's, grown extend's.
type greedyBuffers struct {
	pieces   *dsu.DSU
	finished []bool
	grown    []stream.Edge
	rows     []uint32
	adj      []uint32
	seen     []bool
	stack    []uint32
}

// noParent is the parent of a tree's root.
const noParent = ^uint32(0)

// reset makes the state the answer of a full query: the partition of d
// and its spanning forest, every set clean.
func (g *greedyCC) reset(d *dsu.DSU, forest []stream.Edge) {
	g.fromDSU(d)
	g.setForest(forest)
	g.valid = true
}

// extend makes the state the answer of a query that resumed from start:
// d is its partition and added the forest edges its Boruvka rounds found
// between the pieces start returned.
func (g *greedyCC) extend(d *dsu.DSU, added []stream.Edge) {
	g.fromDSU(d)
	g.buf.grown = append(g.appendEdges(g.buf.grown[:0]), added...)
	g.setForest(g.buf.grown)
}

// setForest makes the forest that of edges (an acyclic edge set; an edge
// closing a cycle would be left out), rooting each tree at its smallest
// vertex. It costs O(Vertices + len(edges)) and reuses its buffers.
func (g *greedyCC) setForest(edges []stream.Edge) {
	n := len(g.label)
	if len(g.parent) != n {
		g.parent, g.buf.seen = make([]uint32, n), make([]bool, n)
	} else {
		clear(g.buf.seen)
	}
	// Adjacency in compressed rows: start[v] is where v's neighbours
	// begin in adj, counted into parent meanwhile.
	deg := g.parent
	clear(deg)
	for _, e := range edges {
		deg[e.Src]++
		deg[e.Dst]++
	}
	g.buf.rows = slices.Grow(g.buf.rows[:0], n+1)[:n+1]
	start := g.buf.rows
	start[0] = 0
	for v := range n {
		start[v+1] = start[v] + deg[v]
	}
	g.buf.adj = slices.Grow(g.buf.adj[:0], 2*len(edges))[:2*len(edges)]
	fill := deg // reuse: fill[v] counts v's neighbours placed
	clear(fill)
	for _, e := range edges {
		g.buf.adj[start[e.Src]+fill[e.Src]] = e.Dst
		fill[e.Src]++
		g.buf.adj[start[e.Dst]+fill[e.Dst]] = e.Src
		fill[e.Dst]++
	}
	for v := range g.parent {
		g.parent[v] = noParent
	}
	g.forestN = 0
	for r := range uint32(n) {
		if g.buf.seen[r] {
			continue
		}
		g.buf.seen[r] = true
		g.buf.stack = append(g.buf.stack[:0], r)
		for len(g.buf.stack) > 0 {
			x := g.buf.stack[len(g.buf.stack)-1]
			g.buf.stack = g.buf.stack[:len(g.buf.stack)-1]
			for _, y := range g.buf.adj[start[x]:start[x+1]] {
				if !g.buf.seen[y] {
					g.buf.seen[y] = true
					g.parent[y] = x
					g.forestN++
					g.buf.stack = append(g.buf.stack, y)
				}
			}
		}
	}
}

// link adds the forest edge {x, y} between two trees: it re-roots x's
// tree at x, reversing the path from x to its root, and hangs it under y.
func (g *greedyCC) link(x, y uint32) {
	par := g.parent
	prev, cur := y, x
	for cur != noParent {
		next := par[cur]
		par[cur] = prev
		prev, cur = cur, next
	}
	g.forestN++
}

// fromDSU makes the sets those of d, every one clean.
func (g *greedyCC) fromDSU(d *dsu.DSU) {
	n := d.Len()
	if len(g.label) != int(n) {
		g.label, g.next = make([]uint32, n), make([]uint32, n)
		g.size, g.dirty = make([]uint32, n), make([]bool, n)
	} else {
		clear(g.size)
		clear(g.dirty)
	}
	g.dirtyN = 0
	g.sets = d.Sets()
	for v := range n {
		r := d.Find(v)
		g.label[v] = r
		g.size[r]++
		g.next[v] = v
	}
	// Each set's list starts at its root: a member is put right after it.
	for v := range n {
		if r := g.label[v]; r != v {
			g.next[v] = g.next[r]
			g.next[r] = v
		}
	}
}

// union merges sets a and b (ids, a != b) by relabelling the smaller one
// and returns the merged set's id.
func (g *greedyCC) union(a, b uint32) uint32 {
	if g.size[a] < g.size[b] {
		a, b = b, a
	}
	v := b
	for {
		g.label[v] = a
		v = g.next[v]
		if v == b {
			break
		}
	}
	g.next[a], g.next[b] = g.next[b], g.next[a]
	g.size[a] += g.size[b]
	g.sets--
	return a
}

// exact reports whether the sets are the answer for every update applied.
func (g *greedyCC) exact() bool { return g.valid && g.dirtyN == 0 }

// labels returns a component label in [0, sets) per vertex, numbered in
// order of each set's smallest vertex, as dsu.DSU.Labels does.
func (g *greedyCC) labels() []uint32 {
	return dsu.DenseLabels(append([]uint32(nil), g.label...))
}

// apply updates the state for us, in order.
func (g *greedyCC) apply(us []stream.Update) {
	label, parent := g.label, g.parent
	for i := range us {
		u, v := us[i].Src, us[i].Dst
		if lu := label[u]; lu != label[v] {
			g.join(u, v)
		} else if parent[u] == v || parent[v] == u {
			g.cut(u, v, lu)
		}
	}
}

// applyRaw updates the state for the records of recs (whole 9-byte stream
// records, undecoded), in order, up to the first that fails the stream's
// checks (stream.Reader.BadRecord's), and returns how many it applied.
func (g *greedyCC) applyRaw(recs []byte) int {
	label, parent := g.label, g.parent
	n := uint32(len(label))
	k := len(recs) / stream.RecordBytes
	for i := range k {
		u, v, ok := stream.DecodeRecord(recs[i*stream.RecordBytes:(i+1)*stream.RecordBytes], n)
		if !ok {
			return i
		}
		if lu := label[u]; lu != label[v] {
			g.join(u, v)
		} else if parent[u] == v || parent[v] == u {
			g.cut(u, v, lu)
		}
	}
	return k
}

// join applies an update {u, v} between two sets.
func (g *greedyCC) join(u, v uint32) {
	lu, lv := g.label[u], g.label[v]
	du, dv := g.dirty[lu], g.dirty[lv]
	if !du && !dv {
		// Each clean set is one tree: hang the smaller one's under the
		// other's endpoint.
		if g.size[lu] <= g.size[lv] {
			g.link(u, v)
		} else {
			g.link(v, u)
		}
		g.union(lu, lv)
		return
	}
	r := g.union(lu, lv)
	if du && dv {
		g.dirtyN--
	}
	g.dirty[lu], g.dirty[lv] = false, false
	g.dirty[r] = true
}

// cut applies an update of the forest edge {u, v} inside set l: the edge
// is gone, and its set is dirty.
func (g *greedyCC) cut(u, v, l uint32) {
	if g.parent[u] == v {
		g.parent[u] = noParent
	} else {
		g.parent[v] = noParent
	}
	g.forestN--
	if !g.dirty[l] {
		g.dirty[l] = true
		g.dirtyN++
	}
}

// start returns where Boruvka resumes from: a DSU of the forest's trees
// (connected pieces of the graph), the forest's edges, and, by root of
// that DSU, which trees are whole clean sets, finished components.
//
// d and finished are valid until the next call; forest is the caller's,
// with room for a spanning forest's edges.
func (g *greedyCC) start() (d *dsu.DSU, forest []stream.Edge, finished []bool) {
	n := uint32(len(g.label))
	if g.buf.pieces == nil || g.buf.pieces.Len() != n {
		g.buf.pieces, g.buf.finished = dsu.New(n), make([]bool, n)
	} else {
		g.buf.pieces.Reset()
		clear(g.buf.finished)
	}
	d, finished = g.buf.pieces, g.buf.finished
	forest = g.edges()
	for _, e := range forest {
		d.Union(e.Src, e.Dst)
	}
	for v := range n {
		if !g.dirty[g.label[v]] {
			finished[d.Find(v)] = true
		}
	}
	return d, forest, finished
}

// edges returns the forest's edges, each with Src < Dst, in no set order,
// in a slice with room for a spanning forest's edges (Vertices − 1).
func (g *greedyCC) edges() []stream.Edge {
	return g.appendEdges(make([]stream.Edge, 0, max(g.forestN, len(g.label)-1)))
}

// appendEdges appends the forest's edges to es, as edges lists them.
func (g *greedyCC) appendEdges(es []stream.Edge) []stream.Edge {
	for v, p := range g.parent {
		if p != noParent {
			es = append(es, stream.Edge{Src: min(uint32(v), p), Dst: max(uint32(v), p)})
		}
	}
	return es
}
