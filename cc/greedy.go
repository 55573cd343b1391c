package cc

import (
	"sketchcc/dsu"
	"sketchcc/sketch"
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
// greedyCC is not safe for concurrent use; the ingesting goroutine owns it.
type greedyCC struct {
	valid  bool
	label  []uint32 // by vertex: its set's id, a member
	next   []uint32 // by vertex: the next member of its set, circular
	size   []uint32 // by set id: its members
	sets   int
	dirty  []bool // by set id
	dirtyN int    // dirty sets
	forest edgeSet
	// pieces and finished are start's results, reused by the next start
	// (a query then writes no freshly mapped memory for them).
	pieces   *dsu.DSU
	finished []bool
}

// reset makes the state the answer of a full query: the partition of d
// and its spanning forest, every set clean.
func (g *greedyCC) reset(d *dsu.DSU, forest []stream.Edge) {
	g.fromDSU(d)
	g.forest.reset(2 * len(forest))
	for _, e := range forest {
		g.forest.add(sketch.EdgeIndex(e.Src, e.Dst))
	}
	g.valid = true
}

// extend makes the state the answer of a query that resumed from start:
// d is its partition and added the forest edges its Boruvka rounds found;
// the forest set already holds the edges start returned.
func (g *greedyCC) extend(d *dsu.DSU, added []stream.Edge) {
	g.fromDSU(d)
	for _, e := range added {
		g.forest.add(sketch.EdgeIndex(e.Src, e.Dst))
	}
	g.forest.refilter()
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
	label := g.label
	for i := range us {
		u, v := us[i].Src, us[i].Dst
		if lu := label[u]; lu != label[v] {
			g.join(u, v)
		} else if idx := sketch.EdgeIndex(u, v); g.forest.mayHave(idx) {
			g.gone(idx, lu)
		}
	}
}

// applyRaw updates the state for the records of recs (whole 9-byte stream
// records, undecoded), in order, up to the first that fails the stream's
// checks (stream.Reader.BadRecord's), and returns how many it applied.
func (g *greedyCC) applyRaw(recs []byte) int {
	label := g.label
	n := uint32(len(label))
	k := len(recs) / stream.RecordBytes
	for i := range k {
		u, v, ok := stream.DecodeRecord(recs[i*stream.RecordBytes:(i+1)*stream.RecordBytes], n)
		if !ok {
			return i
		}
		if lu := label[u]; lu != label[v] {
			g.join(u, v)
		} else if idx := sketch.EdgeIndex(u, v); g.forest.mayHave(idx) {
			g.gone(idx, lu)
		}
	}
	return k
}

// join applies an update {u, v} between two sets.
func (g *greedyCC) join(u, v uint32) {
	lu, lv := g.label[u], g.label[v]
	du, dv := g.dirty[lu], g.dirty[lv]
	r := g.union(lu, lv)
	if !du && !dv {
		g.forest.add(sketch.EdgeIndex(u, v))
		return
	}
	if du && dv {
		g.dirtyN--
	}
	g.dirty[lu], g.dirty[lv] = false, false
	g.dirty[r] = true
}

// gone applies an update of edge idx inside set l that the forest filter
// may hold: a forest edge is gone, and its set is dirty.
func (g *greedyCC) gone(idx uint64, l uint32) {
	if g.forest.remove(idx) && !g.dirty[l] {
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
	if g.pieces == nil || g.pieces.Len() != n {
		g.pieces, g.finished = dsu.New(n), make([]bool, n)
	} else {
		g.pieces.Reset()
		clear(g.finished)
	}
	d, finished = g.pieces, g.finished
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
	es := make([]stream.Edge, 0, max(g.forest.n, len(g.label)-1))
	for _, idx := range g.forest.slots {
		if idx != 0 {
			a, b := sketch.EdgeOf(idx)
			es = append(es, stream.Edge{Src: a, Dst: b})
		}
	}
	return es
}

// edgeSet is an open-addressing hash set of non-zero edge indices with
// linear probing, at most half full: one or two cache lines per lookup,
// which a Go map does not promise.
//
// A bit filter answers most lookups of absent indices (the common case:
// most updates do not touch the forest) from a table of about 32 bits per
// slot that stays in the L1 or L2 cache: a clear bit means absent.
// Removals leave their bits set, so the filter only ever errs towards a
// probe.
type edgeSet struct {
	slots  []uint64 // 0 marks an empty slot
	n      int
	shift  uint
	filter []uint64
	fshift uint
	stale  int // removals whose filter bits are still set
}

// refilter rebuilds the filter once removals have left as many stale bits
// as there are entries, so that it keeps answering most lookups.
func (s *edgeSet) refilter() {
	if s.stale <= s.n {
		return
	}
	clear(s.filter)
	for _, x := range s.slots {
		if x != 0 {
			s.mark(x)
		}
	}
	s.stale = 0
}

// mayHave reports false only when idx is absent.
func (s *edgeSet) mayHave(idx uint64) bool {
	h := (idx * 0xd6e8feb86659fd93) >> s.fshift
	return s.filter[h>>6]&(1<<(h&63)) != 0
}

func (s *edgeSet) mark(idx uint64) {
	h := (idx * 0xd6e8feb86659fd93) >> s.fshift
	s.filter[h>>6] |= 1 << (h & 63)
}

func (s *edgeSet) reset(capacity int) {
	size := 16
	for size < 2*capacity {
		size <<= 1
	}
	if cap(s.slots) >= size {
		s.slots = s.slots[:size]
		clear(s.slots)
	} else {
		s.slots = make([]uint64, size)
	}
	s.n = 0
	s.shift = 64
	for x := size; x > 1; x >>= 1 {
		s.shift--
	}
	// 16 filter bits per slot, at least one word.
	words := max(1, size/4)
	if cap(s.filter) >= words {
		s.filter = s.filter[:words]
		clear(s.filter)
	} else {
		s.filter = make([]uint64, words)
	}
	s.fshift = s.shift - 4
	s.stale = 0
}

func (s *edgeSet) slot(idx uint64) int {
	return int((idx * 0x9e3779b97f4a7c15) >> s.shift)
}

func (s *edgeSet) add(idx uint64) {
	if 2*(s.n+1) > len(s.slots) {
		old := s.slots
		s.slots = nil
		s.reset(len(old))
		for _, x := range old {
			if x != 0 {
				s.add(x)
			}
		}
	}
	mask := len(s.slots) - 1
	for i := s.slot(idx); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case idx:
			return
		case 0:
			s.slots[i] = idx
			s.n++
			s.mark(idx)
			return
		}
	}
}

func (s *edgeSet) has(idx uint64) bool {
	mask := len(s.slots) - 1
	for i := s.slot(idx); ; i = (i + 1) & mask {
		switch s.slots[i] {
		case idx:
			return true
		case 0:
			return false
		}
	}
}

// remove deletes idx and reports whether it was there. It shifts later
// entries of the probe run back (no tombstones), so lookups stay short.
func (s *edgeSet) remove(idx uint64) bool {
	mask := len(s.slots) - 1
	i := s.slot(idx)
	for s.slots[i] != idx {
		if s.slots[i] == 0 {
			return false
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; s.slots[j] != 0; j = (j + 1) & mask {
		// The entry at j may move to the hole at i when its home slot k
		// is not cyclically in (i, j].
		k := s.slot(s.slots[j])
		if (j > i && (k <= i || k > j)) || (j < i && k <= i && k > j) {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = 0
	s.n--
	s.stale++
	return true
}
