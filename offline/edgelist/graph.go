package edgelist

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// Graph is a simple undirected graph over the dense vertex ids
// [0, Vertices).
type Graph struct {
	// Vertices is the number of vertices.
	Vertices uint32
	// Edges holds each edge once with Src < Dst, sorted by (Src, Dst).
	Edges []stream.Edge
	// Original[v] is the id vertex v had in the input, in ascending order.
	// It is nil when the input declared its vertex range (MTX, LG, Text):
	// vertex v then had id Base+v, and nothing is held per vertex, since a
	// header may declare billions that no entry names. WriteMap writes
	// either.
	Original []uint64
	// Base is the input id of vertex 0 when Original is nil: 1 for MTX and
	// LG, 0 for Text.
	Base uint64
	// Stats counts the lines and dropped entries.
	Stats Stats
	// Skipped says which lines were skipped (Stats counts them).
	Skipped Skipped
	// Notes states what the parser assumed about the input, for example
	// the reading of a MatrixMarket file without its banner; nil if
	// nothing.
	Notes []string
}

// Components returns the number of connected components of g, isolated
// vertices included, by a union-find over its edges.
func (g *Graph) Components() int {
	return Components(g.Vertices, g.Edges)
}

// Components returns the number of connected components of the graph with
// vertex ids [0, vertices) and the given edges, by a plain union-find. Every
// endpoint must be < vertices. Its memory follows the edges when they touch
// fewer vertices than there are (a header that declares billions of
// vertices, a few of them in edges): the union-find then covers the
// endpoints only, and every other vertex is a component of its own.
func Components(vertices uint32, edges []stream.Edge) int {
	if uint64(vertices) <= 2*uint64(len(edges)) {
		d := dsu.New(vertices)
		for _, e := range edges {
			d.Union(e.Src, e.Dst)
		}
		return d.Sets()
	}
	ends := endpoints(edges)
	d := dsu.New(uint32(len(ends)))
	for _, e := range edges {
		s, _ := slices.BinarySearch(ends, e.Src)
		t, _ := slices.BinarySearch(ends, e.Dst)
		d.Union(uint32(s), uint32(t))
	}
	return int(vertices) - len(ends) + d.Sets()
}

// endpoints returns the distinct endpoints of edges, ascending.
func endpoints(edges []stream.Edge) []uint32 {
	ends := make([]uint32, 0, 2*len(edges))
	for _, e := range edges {
		ends = append(ends, e.Src, e.Dst)
	}
	slices.Sort(ends)
	return slices.Compact(ends)
}

// IDs returns the input ids of all vertices in ascending order: Original,
// or a new slice of Vertices ids for a declared range (8 bytes a vertex,
// however few of them the edges name: WriteMap does without it, and Union
// calls it only for graphs that do not share one declared range).
func (g *Graph) IDs() []uint64 {
	if g.Original != nil {
		return g.Original
	}
	ids := make([]uint64, g.Vertices)
	for v := range ids {
		ids[v] = g.Base + uint64(v)
	}
	return ids
}

// WriteMap writes "new original" lines, the dense id and the id the vertex
// had in the input, in ascending order: one per vertex when g has
// Original, and for a declared range (Original nil) one per vertex that
// has an edge, so that the map follows the edges read, not the count a
// header declares. A vertex v < Vertices missing from the map is then an
// isolated vertex of id Base+v.
func (g *Graph) WriteMap(w io.Writer) error {
	if g.Original != nil {
		return WriteMap(w, g.Original)
	}
	return writeMap(w, func(yield func(uint32, uint64) bool) {
		for _, v := range endpoints(g.Edges) {
			if !yield(v, g.Base+uint64(v)) {
				return
			}
		}
	})
}

// Union merges graphs over one id space (for example daily snapshots): it
// returns a graph u over the union of their vertices, whose Edges hold
// every edge of any of them once (sorted, Src < Dst), and each graph's
// edges relabelled to u's ids. Graphs that all declare a range from one
// Base (MTX, LG or Text files) keep their ids: u has that Base, the
// largest of their vertex counts and no Original, so nothing is held per
// declared vertex. Otherwise u.Original is the ascending union of their
// ids (a declared range counts all its ids) and edges are relabelled to
// ranks in it; relabelling is monotone, so every returned edge list keeps
// Src < Dst and its sorted order. It returns an error wrapping ErrRange if
// the union has 2^32 ids or more.
func Union(graphs []*Graph) (u *Graph, edges [][]stream.Edge, err error) {
	u = &Graph{}
	if ranges(graphs) {
		u.Base = graphs[0].Base
		edges = make([][]stream.Edge, len(graphs))
		for i, g := range graphs {
			u.Vertices = max(u.Vertices, g.Vertices)
			edges[i] = g.Edges
		}
		u.Edges = unionEdges(edges)
		return u, edges, nil
	}
	var original []uint64
	for _, g := range graphs {
		original = append(original, g.IDs()...)
	}
	slices.Sort(original)
	original = slices.Clip(slices.Compact(original))
	if int64(len(original)) > 1<<32-1 {
		return nil, nil, fmt.Errorf("%w: %d vertices in the union", ErrRange, len(original))
	}
	edges = make([][]stream.Edge, len(graphs))
	for i, g := range graphs {
		remap := make([]uint32, g.Vertices)
		j := 0
		for v, id := range g.IDs() {
			for original[j] != id {
				j++
			}
			remap[v] = uint32(j)
		}
		es := make([]stream.Edge, len(g.Edges))
		for k, e := range g.Edges {
			es[k] = stream.Edge{Src: remap[e.Src], Dst: remap[e.Dst]}
		}
		edges[i] = es
	}
	u.Vertices, u.Original, u.Edges = uint32(len(original)), original, unionEdges(edges)
	return u, edges, nil
}

// ranges reports whether every graph declares a range of ids from one
// Base.
func ranges(graphs []*Graph) bool {
	for _, g := range graphs {
		if g.Original != nil || g.Base != graphs[0].Base {
			return false
		}
	}
	return len(graphs) > 0
}

// unionEdges returns the distinct edges of the sorted edge lists, sorted.
func unionEdges(lists [][]stream.Edge) []stream.Edge {
	all := slices.Concat(lists...)
	slices.SortFunc(all, func(a, b stream.Edge) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst))
	})
	return slices.Clip(slices.Compact(all))
}

// WriteMap writes one "new original" line per vertex: the dense id and the
// id it had in the input.
func WriteMap(w io.Writer, original []uint64) error {
	return writeMap(w, func(yield func(uint32, uint64) bool) {
		for v, id := range original {
			if !yield(uint32(v), id) {
				return
			}
		}
	})
}

// writeMap writes a "new original" line for each pair of ids.
func writeMap(w io.Writer, ids iter.Seq2[uint32, uint64]) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var line []byte
	for v, id := range ids {
		line = strconv.AppendUint(line[:0], uint64(v), 10)
		line = append(line, ' ')
		line = strconv.AppendUint(line, id, 10)
		line = append(line, '\n')
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("edgelist: cannot write id map: %w", err)
	}
	return nil
}
