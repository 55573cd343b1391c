package sketch

import (
	"errors"
	"fmt"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// ErrTooManyRounds is wrapped by SpanningForest when every column has been
// used and some supernode has not yet sampled Zero.
var ErrTooManyRounds = errors.New("sketch: Boruvka ran out of sketch columns")

// Forest is a spanning forest: the edges Boruvka used to join supernodes,
// at most Vertices−1 of them, each with Src < Dst.
type Forest struct {
	Edges []stream.Edge
}

// BoruvkaStats counts the work of one SpanningForest call.
type BoruvkaStats struct {
	// Rounds is the number of Boruvka rounds run (columns used).
	Rounds int
	// Samples is the number of supernode samples drawn.
	Samples int
	// Merges is the number of unions that joined two supernodes.
	Merges int
	// Fails counts samples that returned Fail.
	Fails int
	// BadSamples counts Good samples rejected because the index was not an
	// edge leaving the supernode (a checksum collision; expected 0).
	BadSamples int
}

// SpanningForest runs Boruvka's algorithm over the sketches in t, starting
// from the partition in d (singletons for a full query), and leaves the
// connected components in d. Round r samples column r of every unfinished
// supernode's sketch (the XOR of its vertices' sketches), unions the
// sampled edges, and stops when every supernode samples Zero (Ahn, Guha,
// McGregor, SODA 2012, §3). t is only read, so ingestion can go on after a
// query.
//
// It returns an error wrapping ErrTooManyRounds, with the number of
// unfinished supernodes, when the columns run out first; the partition in d
// is then a refinement of the true components and must not be reported as
// the answer. d.Len() must equal the table's vertex count.
func SpanningForest(t *Table, d *dsu.DSU) (Forest, BoruvkaStats, error) {
	p := t.Params()
	n := p.Vertices
	if d.Len() != n {
		return Forest{}, BoruvkaStats{}, fmt.Errorf("sketch: DSU has %d ids, table %d vertices", d.Len(), n)
	}
	var (
		st     BoruvkaStats
		forest Forest
		w      = p.Rows + 1        // buckets of one supernode's column view
		root   = make([]uint32, n) // root of each vertex at the round's start
		done   = make([]bool, n)   // by root: sampled Zero, a finished component
		slot   = make([]int32, n)  // by root: its column view in acc, or -1
		acc    []Bucket            // column views of multi-vertex supernodes
		multi  []uint32            // roots with a column view in acc
		edges  []stream.Edge       // edges sampled this round
		active = d.Sets()          // unfinished supernodes
	)
	for r := 0; r < p.Columns; r++ {
		st.Rounds++
		// Snapshot the partition and lay out one column view per
		// unfinished supernode of more than one vertex.
		multi = multi[:0]
		for v := range n {
			rt := d.Find(v)
			root[v] = rt
			if rt == v && !done[v] {
				slot[v] = -1
				if d.Size(v) > 1 {
					slot[v] = int32(len(multi))
					multi = append(multi, v)
				}
			}
		}
		need := len(multi) * w
		if cap(acc) < need {
			acc = make([]Bucket, need)
		}
		acc = acc[:need]
		clear(acc)
		colLo, colHi := 1+r*p.Rows, 1+(r+1)*p.Rows
		for v := range n {
			rt := root[v]
			if done[rt] || slot[rt] < 0 {
				continue
			}
			s := t.Sketch(v)
			view := acc[int(slot[rt])*w : int(slot[rt]+1)*w]
			view[0].Alpha ^= s[0].Alpha
			view[0].Gamma ^= s[0].Gamma
			Merge(view[1:], s[colLo:colHi])
		}
		// Sample every unfinished supernode.
		edges = edges[:0]
		fails := 0
		for v := range n {
			if root[v] != v || done[v] {
				continue
			}
			var idx uint64
			var res Result
			if i := slot[v]; i >= 0 {
				idx, res = p.Sample(acc[int(i)*w:int(i+1)*w], r)
			} else {
				idx, res = p.Sample(t.Sketch(v), r)
			}
			st.Samples++
			switch res {
			case Zero:
				done[v] = true
				active--
			case Fail:
				fails++
			case Good:
				a, b := EdgeOf(idx)
				if a >= b || b >= n || (root[a] == v) == (root[b] == v) {
					st.BadSamples++
					fails++
					continue
				}
				edges = append(edges, stream.Edge{Src: a, Dst: b})
			}
		}
		st.Fails += fails
		merges := 0
		for _, e := range edges {
			if _, ok := d.Union(e.Src, e.Dst); ok {
				forest.Edges = append(forest.Edges, e)
				merges++
				active--
			}
		}
		st.Merges += merges
		if active == 0 || (merges == 0 && fails == 0) {
			return forest, st, nil
		}
	}
	return forest, st, fmt.Errorf("%w: %d supernodes unresolved after %d rounds (sketch factor %v, %d columns); "+
		"rerun with a larger --sketch-factor", ErrTooManyRounds, active, st.Rounds, p.Factor, p.Columns)
}
