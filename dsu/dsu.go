// Package dsu implements a disjoint-set union (union–find) over vertex ids
// in [0, n): union by size with path halving, so that a sequence of m
// operations costs O(m·α(n)) (Tarjan 1975).
//
// A DSU is not safe for concurrent use.
package dsu

// DSU is a union–find over the ids [0, n). Its memory is 8 bytes per id.
type DSU struct {
	parent []uint32
	size   []uint32
	sets   int
}

// New returns a DSU of n singleton sets.
func New(n uint32) *DSU {
	d := &DSU{parent: make([]uint32, n), size: make([]uint32, n)}
	d.Reset()
	return d
}

// Reset makes every id a singleton set again, reusing the memory.
func (d *DSU) Reset() {
	for i := range d.parent {
		d.parent[i] = uint32(i)
		d.size[i] = 1
	}
	d.sets = len(d.parent)
}

// Len returns n, the number of ids.
func (d *DSU) Len() uint32 { return uint32(len(d.parent)) }

// Find returns the representative (root) of v's set. v must be < Len().
func (d *DSU) Find(v uint32) uint32 {
	p := d.parent
	for p[v] != v {
		p[v] = p[p[v]] // path halving
		v = p[v]
	}
	return v
}

// Union merges the sets of a and b. It returns the root of the merged set
// and whether the two were different sets.
func (d *DSU) Union(a, b uint32) (root uint32, merged bool) {
	a, b = d.Find(a), d.Find(b)
	if a == b {
		return a, false
	}
	if d.size[a] < d.size[b] {
		a, b = b, a
	}
	d.parent[b] = a
	d.size[a] += d.size[b]
	d.sets--
	return a, true
}

// Sets returns the number of disjoint sets.
func (d *DSU) Sets() int { return d.sets }

// Size returns the number of ids in v's set.
func (d *DSU) Size(v uint32) uint32 { return d.size[d.Find(v)] }

// Labels returns, for every id, a dense component label in [0, Sets()),
// numbered in order of each set's smallest id. The slice has Len() entries
// and is owned by the caller.
func (d *DSU) Labels() []uint32 {
	roots := make([]uint32, len(d.parent))
	for v := range roots {
		roots[v] = d.Find(uint32(v))
	}
	return DenseLabels(roots)
}

// DenseLabels returns, for set ids ids[v] in [0, len(ids)) (any id per set,
// such as a member), a dense label per element in [0, number of sets),
// numbered in order of each set's smallest element. It may reuse ids's
// memory for the result: the caller must not use ids afterwards.
func DenseLabels(ids []uint32) []uint32 {
	const none = ^uint32(0)
	byID := make([]uint32, len(ids))
	for i := range byID {
		byID[i] = none
	}
	next := uint32(0)
	for v, id := range ids {
		if byID[id] == none {
			byID[id] = next
			next++
		}
		ids[v] = byID[id]
	}
	return ids
}
