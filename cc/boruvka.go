package cc

import (
	"fmt"
	"sync"
	"sync/atomic"

	"sketchcc/dsu"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// ErrTooManyRounds is wrapped by Room.Query's error when every sketch
// column has been used and some supernode has not yet sampled Zero: the
// sketches of a larger sketch factor have more columns. It is
// sketch.ErrTooManyRounds.
var ErrTooManyRounds = sketch.ErrTooManyRounds

// Forest is a spanning forest: the edges Boruvka used to join supernodes,
// at most Vertices−1 of them, each with Src < Dst.
type Forest struct {
	Edges []stream.Edge
}

// BoruvkaStats counts the work of one query's Boruvka run.
type BoruvkaStats struct {
	// Reads is the number of vertex sketches read (with the vertex's
	// buffered updates, when the query reads them), over all rounds.
	Reads int
	// Vertices is the number of vertices in the supernodes Boruvka had to
	// resolve (all of them for a full query; fewer when the query reuses
	// the components of the last answer that no deletion re-opened).
	Vertices int
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

// noVertex marks the absence of a vertex.
const noVertex = ^uint32(0)

// resume says where a query that reuses the last answer starts Boruvka
// from; its zero fields (and implicit = noVertex) give a plain run.
type resume struct {
	// finished marks, by root of the DSU, the sets that are complete
	// components, left alone; nil marks none.
	finished []bool
	// implicit is a vertex of the one supernode whose members are never
	// listed (every supernode that contains it is, after merges): its view
	// is the XOR of the other active supernodes' views (see sampleRound),
	// so a round costs only what the other supernodes hold. noVertex
	// means none: the largest supernode of each round is then the one not
	// merged, but every vertex is listed.
	implicit uint32
	// held adds the buffered updates of a vertex to the views it is in;
	// nil when the sketches hold every update.
	held heldFunc
	// first is the column of round 0: the first column of the sketch set
	// Boruvka reads (sketch.Params.WithSets); round r reads column
	// first+r.
	first int
	// scratch, when set, holds the per-vertex arrays of an earlier call,
	// reused: a query then writes no freshly mapped memory for them.
	scratch *boruvkaScratch
}

// boruvkaScratch is spanningForest's per-vertex working memory.
type boruvkaScratch struct {
	root  []uint32
	done  []bool
	slot  []int32
	verts []uint32
}

// get returns the arrays for n vertices, done cleared.
func (s *boruvkaScratch) get(n uint32) (root []uint32, done []bool, slot []int32, verts []uint32) {
	if len(s.root) != int(n) {
		s.root, s.done, s.slot, s.verts = make([]uint32, n), make([]bool, n), make([]int32, n), make([]uint32, 0, n)
	} else {
		clear(s.done)
	}
	return s.root, s.done, s.slot, s.verts[:0]
}

// columnsFunc returns sketches that hold column c (and, for a table kept
// on disk, the next few columns, loaded in one pass), valid until the
// next call; or the error of loading them.
type columnsFunc func(c int) (*sketch.Columns, error)

// tableColumns is the columnsFunc of sketches held in memory.
func tableColumns(t *sketch.Table) columnsFunc {
	cols := t.Columns()
	return func(int) (*sketch.Columns, error) { return cols, nil }
}

// spanningForest runs Boruvka's algorithm over the sketches cols gives (p's) for at
// most rounds rounds (<= columns), starting from the partition in d
// (singletons for a full query), and leaves the connected components in
// d. Round r samples column r of every unfinished supernode's sketch (the
// XOR of its vertices' sketches, plus what rs.held adds), unions the
// sampled edges, and stops when every supernode samples Zero (Ahn, Guha,
// McGregor, SODA 2012, §3). Every set of d must be connected in the graph.
// It leaves alone every set whose root rs.finished marks (a component
// known to be complete) and never lists the members of the supernode of
// rs.implicit, so that a round's work follows the vertices of the listed
// supernodes still active, not all vertices. t is only read, so ingestion
// can go on after a query; no other goroutine may write it meanwhile.
//
// The supernode sketches of each round are merged and sampled by up to
// workers goroutines, which it starts and waits for. The answer does not
// depend on workers: samples are per supernode and the unions are applied
// in order by the caller's goroutine.
//
// It returns an error wrapping ErrTooManyRounds, with the number of
// unfinished supernodes, when the rounds run out first; the partition in
// d is then a refinement of the true components and must not be reported
// as the answer. d.Len() must equal the table's vertex count.
func spanningForest(p sketch.Params, cols columnsFunc, d *dsu.DSU, workers, rounds int, rs resume) (Forest, BoruvkaStats, error) {
	n := p.Vertices()
	if d.Len() != n {
		return Forest{}, BoruvkaStats{}, fmt.Errorf("cc: DSU has %d ids, table %d vertices", d.Len(), n)
	}
	workers = max(workers, 1)
	if rs.scratch == nil {
		rs.scratch = new(boruvkaScratch)
	}
	// root: by vertex of verts, its root at the round's start; done: by
	// root, sampled Zero (a finished component); slot: by root, its index
	// in the round's active supernodes, or -1.
	root, done, slot, verts := rs.scratch.get(n)
	hidden := noVertex // root of the implicit supernode at the round's start
	if rs.implicit != noVertex {
		hidden = d.Find(rs.implicit)
	}
	verts, remain := listVertices(d, rs.finished, hidden, slot, verts)
	st := BoruvkaStats{Vertices: len(verts)}
	if hidden != noVertex {
		st.Vertices += int(d.Size(hidden))
	}
	var (
		forest  Forest
		g       = grouping{root: root, slot: slot}
		samples []sample // by active index
	)
	for r := range rounds {
		if remain == 0 {
			break
		}
		st.Rounds++
		t, err := cols(rs.first + r)
		if err != nil {
			return forest, st, fmt.Errorf("cc: round %d: %w", r, err)
		}
		largest := g.group(d, verts, hidden, done)
		// Sample every unfinished supernode, in parallel.
		if cap(samples) < len(g.active) {
			samples = make([]sample, len(g.active))
		}
		samples = samples[:len(g.active)]
		st.Reads += sampleRound(t, rs.first+r, g.active, g.start, g.members, samples, largest, workers, rs.held)
		edges, fails, zeros := takeSamples(d, g.active, samples, slot, done, &st)
		remain -= zeros
		for _, v := range g.active {
			slot[v] = -1
		}
		merges := joinSamples(d, edges, done, &forest, &st)
		remain -= merges
		st.Fails += fails
		st.Merges += merges
		if remain == 0 || (merges == 0 && fails == 0) {
			return forest, st, nil
		}
		// Drop the vertices of finished supernodes, and those now in the
		// implicit one.
		if hidden != noVertex {
			hidden = d.Find(rs.implicit)
		}
		k := 0
		for _, v := range verts {
			if !done[root[v]] && (hidden == noVertex || d.Find(v) != hidden) {
				verts[k] = v
				k++
			}
		}
		verts = verts[:k]
	}
	if remain == 0 {
		return forest, st, nil
	}
	return forest, st, fmt.Errorf("%w: %d supernodes unresolved after %d rounds (sketch factor %v, %d columns); "+
		"a larger sketch factor gives more columns", ErrTooManyRounds, remain, st.Rounds, p.Factor(), p.SetColumns())
}

// listVertices clears slot and appends to verts, in order, every vertex
// of the sets of d that finished does not mark, but those of the set
// rooted at hidden. It returns verts and the number of those sets, hidden
// included.
func listVertices(d *dsu.DSU, finished []bool, hidden uint32, slot []int32, verts []uint32) ([]uint32, int) {
	remain := 0
	for v := range d.Len() {
		slot[v] = -1
		rt := d.Find(v)
		if finished != nil && finished[rt] {
			continue
		}
		if rt == v {
			remain++
		}
		if rt != hidden {
			verts = append(verts, v)
		}
	}
	return verts, remain
}

// grouping is a round's snapshot of the partition of the listed vertices:
// the active supernodes and their members, grouped by a counting sort. Its
// slices are reused from round to round.
type grouping struct {
	root    []uint32 // by vertex: its root at the round's start
	slot    []int32  // by root: its index in active, or -1
	active  []uint32 // unfinished supernodes (roots), by first member
	start   []int32  // members of active[i] are members[start[i]:start[i+1]]
	members []uint32
	fill    []int32
}

// group snapshots the partition of verts in d: every root gets its slot,
// and the supernode rooted at hidden, unless done, comes last with no
// members listed. It returns the index in active of the supernode whose
// view is the XOR of the others': hidden's, or else the one with the most
// members.
func (g *grouping) group(d *dsu.DSU, verts []uint32, hidden uint32, done []bool) (largest int) {
	root, slot := g.root, g.slot
	g.active = g.active[:0]
	for _, v := range verts {
		rt := d.Find(v)
		root[v] = rt
		if slot[rt] < 0 {
			slot[rt] = int32(len(g.active))
			g.active = append(g.active, rt)
		}
	}
	largest = -1
	if hidden != noVertex && !done[hidden] {
		largest = len(g.active)
		slot[hidden] = int32(len(g.active))
		g.active = append(g.active, hidden)
	}
	start := append(g.start[:0], make([]int32, len(g.active)+1)...)
	for _, v := range verts {
		start[slot[root[v]]+1]++
	}
	for i := range g.active {
		start[i+1] += start[i]
	}
	g.members = append(g.members[:0], make([]uint32, len(verts))...)
	g.fill = append(g.fill[:0], start[:len(g.active)]...)
	for _, v := range verts {
		s := slot[root[v]]
		g.members[g.fill[s]] = v
		g.fill[s]++
	}
	g.start = start
	if largest < 0 {
		largest = 0
		for i := range g.active {
			if start[i+1]-start[i] > start[largest+1]-start[largest] {
				largest = i
			}
		}
	}
	return largest
}

// takeSamples reads the samples of the active supernodes, in order: a
// Zero marks its supernode done, and a Good one gives an edge from it to
// another active supernode (slot still set), or counts as bad. It returns
// the edges, the failed samples and the Zeros, counting samples and bad
// ones in st.
func takeSamples(d *dsu.DSU, active []uint32, samples []sample, slot []int32, done []bool, st *BoruvkaStats) (edges []stream.Edge, fails, zeros int) {
	n := d.Len()
	for i, v := range active {
		s := samples[i]
		st.Samples++
		switch s.res {
		case sketch.Zero:
			done[v] = true
			zeros++
		case sketch.Fail:
			fails++
		case sketch.Good:
			a, b := sketch.EdgeOf(s.idx)
			if a >= b || b >= n {
				st.BadSamples++
				fails++
				continue
			}
			ra, rb := d.Find(a), d.Find(b)
			// One end in the supernode, the other in an active one.
			if (ra == v) == (rb == v) || slot[ra] < 0 || slot[rb] < 0 {
				st.BadSamples++
				fails++
				continue
			}
			edges = append(edges, stream.Edge{Src: a, Dst: b})
		}
	}
	return edges, fails, zeros
}

// joinSamples unions the endpoints of the sampled edges in order, adding
// each edge that joins two supernodes to the forest, and returns how many
// did. An edge into a supernode that sampled Zero counts as bad in st.
func joinSamples(d *dsu.DSU, edges []stream.Edge, done []bool, forest *Forest, st *BoruvkaStats) (merges int) {
	for _, e := range edges {
		if done[d.Find(e.Src)] || done[d.Find(e.Dst)] {
			st.BadSamples++ // an edge into a supernode that sampled Zero
			continue
		}
		if _, ok := d.Union(e.Src, e.Dst); ok {
			forest.Edges = append(forest.Edges, e)
			merges++
		}
	}
	return merges
}

type sample struct {
	idx uint64
	res sketch.Result
}

// sampleBlock is the number of supernodes a goroutine claims at a time.
const sampleBlock = 64

// bigSupernode is the member count from which one supernode's sketch is
// merged by all goroutines; bigHeldSupernode is that count when the
// members' buffered updates are hashed too (about a thousand per vertex
// on the Kronecker streams between queries), so a few re-opened pieces of
// a few hundred vertices each keep every core busy.
const (
	bigSupernode     = 2048
	bigHeldSupernode = 128
)

// heldFunc adds to view, the column view of round r (deterministic bucket,
// then the rows of column r) of a supernode, the updates of vertex v that
// are not yet in v's sketch (buffered in its gutter); nil when the sketches
// hold every update.
type heldFunc func(view []sketch.Bucket, r int, v uint32)

// memberView XORs into view the column view of round r of the vertices ms:
// their sketches' deterministic buckets and rows of column r, and what
// held adds.
func memberView(t *sketch.Columns, view []sketch.Bucket, r int, ms []uint32, held heldFunc) {
	for _, v := range ms {
		det, rows := t.Column(v, r)
		view[0].Alpha ^= det.Alpha
		view[0].Gamma ^= det.Gamma
		sketch.Merge(view[1:], rows)
		if held != nil {
			held(view, r, v)
		}
	}
}

// mergeParallel returns the column view of round r of the vertices ms,
// merged by workers goroutines into private views and then combined.
func mergeParallel(t *sketch.Columns, ms []uint32, r, workers int, held heldFunc) []sketch.Bucket {
	w := 1 + t.Params().Rows()
	views := make([]sketch.Bucket, workers*w)
	var wg sync.WaitGroup
	for k := range workers {
		part := ms[k*len(ms)/workers : (k+1)*len(ms)/workers]
		view := views[k*w : (k+1)*w]
		wg.Go(func() { memberView(t, view, r, part, held) })
	}
	wg.Wait()
	for k := 1; k < workers; k++ {
		sketch.Merge(views[:w], views[k*w:(k+1)*w])
	}
	return views[:w]
}

// sampleRound fills samples[i] with the sample of column r of supernode
// active[i], whose vertices are members[start[i]:start[i+1]], and returns
// the number of vertices whose sketches it read. r is below the column
// count and every slice sampled is a sketch or a column view, so Sample's
// and SampleColumn's errors cannot occur and are not checked.
//
// Supernode active[largest] (the largest, or the implicit one whose members
// are not listed) is not merged: every update adds its index to two
// sketches, so the XOR of all vertices' sketches is zero, and every vertex
// outside the active supernodes is in a finished component, whose XOR is
// zero too (no edge leaves it). Its view is therefore the XOR of the other
// active supernodes' views, which are merged anyway; a round costs what
// the other supernodes hold, and a lone active supernode samples Zero
// without reading a sketch. held must keep that balance: it adds each
// update to both endpoints or to neither.
func sampleRound(t *sketch.Columns, r int, active []uint32, start []int32, members []uint32, samples []sample, largest, workers int, held heldFunc) (reads int) {
	p := t.Params()
	w := p.Rows() + 1
	// acc[k·w:(k+1)·w] is goroutine k's XOR of the views it merged.
	nw := 1
	if workers > 1 && len(active) > sampleBlock {
		nw = min(workers, (len(active)+sampleBlock-1)/sampleBlock)
	}
	acc := make([]sketch.Bucket, (nw+1)*w)
	// A supernode of many vertices (the giant component of a dense graph)
	// is merged by all goroutines, each into its own view, so that it does
	// not leave one goroutine working while the others wait.
	bigAt := bigSupernode
	if held != nil {
		bigAt = bigHeldSupernode
	}
	big := func(ms []uint32) bool { return workers > 1 && len(ms) >= bigAt }
	for i := range active {
		if ms := members[start[i]:start[i+1]]; i != largest && big(ms) {
			view := mergeParallel(t, ms, r, workers, held)
			samples[i].idx, samples[i].res, _ = p.SampleColumn(view)
			sketch.Merge(acc[nw*w:], view)
		}
	}
	var next atomic.Int64
	work := func(k int) {
		view := make([]sketch.Bucket, w)
		sum := acc[k*w : (k+1)*w]
		for {
			lo := int(next.Add(sampleBlock)) - sampleBlock
			if lo >= len(active) {
				return
			}
			for i := lo; i < min(lo+sampleBlock, len(active)); i++ {
				ms := members[start[i]:start[i+1]]
				if i == largest || big(ms) {
					continue
				}
				if len(ms) == 1 && held == nil {
					det, rows := t.Column(ms[0], r)
					samples[i].idx, samples[i].res = p.SampleParts(det, rows)
					sum[0].Alpha ^= det.Alpha
					sum[0].Gamma ^= det.Gamma
					sketch.Merge(sum[1:], rows)
					continue
				}
				clear(view)
				memberView(t, view, r, ms, held)
				samples[i].idx, samples[i].res, _ = p.SampleColumn(view)
				sketch.Merge(sum, view)
			}
		}
	}
	if nw == 1 {
		work(0)
	} else {
		var wg sync.WaitGroup
		for k := range nw {
			wg.Go(func() { work(k) })
		}
		wg.Wait()
	}
	for k := 1; k <= nw; k++ {
		sketch.Merge(acc[:w], acc[k*w:(k+1)*w])
	}
	samples[largest].idx, samples[largest].res, _ = p.SampleColumn(acc[:w])
	return len(members) - int(start[largest+1]-start[largest])
}
