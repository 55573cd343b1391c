package cc

import (
	"sketchcc/dsu"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// greedyCC keeps the answer of the last full query exact while the stream
// allows it: the "GreedyCC" shortcut of Landscape (Tench et al., ALENEX
// 2025, §5). After a full query the DSU holds the components and forest a
// spanning forest of the graph. Under toggle semantics an update of edge e
// either
//   - toggles a forest edge off: the forest may no longer span; invalid
//     until the next full query;
//   - joins two components (e cannot have been present, or they would be
//     one component): union them and add e to the forest;
//   - toggles a non-forest edge inside a component: nothing changes.
//
// The type byte is not trusted, so an ill-formed stream (a duplicate
// insert, a delete of an absent edge) cannot make the answer wrong.
//
// greedyCC is not safe for concurrent use; the ingesting goroutine owns it.
type greedyCC struct {
	valid  bool
	d      *dsu.DSU
	forest []stream.Edge
	set    edgeSet // edge indices of forest
}

// reset makes the state the answer of a full query: d (taken over) and its
// spanning forest.
func (g *greedyCC) reset(d *dsu.DSU, forest []stream.Edge) {
	g.d = d
	g.forest = append(g.forest[:0], forest...)
	g.set.reset(2 * len(forest))
	for _, e := range forest {
		g.set.add(sketch.EdgeIndex(e.Src, e.Dst))
	}
	g.valid = true
}

// apply updates the state for us, in order. It stops at the first forest
// edge toggled off and leaves the state invalid.
func (g *greedyCC) apply(us []stream.Update) {
	d := g.d
	for i := range us {
		u, v := us[i].Src, us[i].Dst
		ru, rv := d.Find(u), d.Find(v)
		if ru != rv {
			d.Union(ru, rv)
			e := stream.Edge{Src: u, Dst: v}.Canonical()
			g.forest = append(g.forest, e)
			g.set.add(sketch.EdgeIndex(u, v))
			continue
		}
		if g.set.has(sketch.EdgeIndex(u, v)) {
			g.valid = false
			return
		}
	}
}

// edgeSet is an open-addressing hash set of non-zero edge indices with
// linear probing, at most half full: one or two cache lines per lookup,
// which a Go map does not promise.
type edgeSet struct {
	slots []uint64 // 0 marks an empty slot
	n     int
	shift uint
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
